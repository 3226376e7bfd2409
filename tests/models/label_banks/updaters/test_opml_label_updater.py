import pytest
import torch

from spml_mm.models import OPMLLabelBank
from spml_mm.models.label_banks.label_bank import LabelBank
from spml_mm.models.label_banks.updaters import (OPMLLabelUpdater,
                                                 num_corrections)

# Rows 0-3 observe class 0, rows 4-7 class 1.
OBSERVED = torch.zeros(8, 2, dtype=torch.bool)
OBSERVED[:4, 0] = OBSERVED[4:, 1] = True
SCORES = torch.tensor([[.95, .9], [.8, .8], [.7, .7], [.5, .05], [.9, .2],
                       [.85, .3], [.6, .4], [.1, .45]])
# Class 0 ranks r0 (P) r4 r5 r1 (P) r2 (P) r6 r3 (P) r7: precisions at the
# positives 1/1, 2/4, 3/5, 4/7. Class 1 ranks r0 r1 r2 r7 (P) r6 (P) r5 (P)
# r4 (P) r3: precisions 1/4, 2/5, 3/6, 4/7.
AP = torch.tensor([(1 + 2 / 4 + 3 / 5 + 4 / 7) / 4,
                   (1 / 4 + 2 / 5 + 3 / 6 + 4 / 7) / 4])


def corrected(bank):
    return sorted(map(tuple, (bank.pseudo_label == 1).nonzero().tolist()))


def test_ap_and_number_of_corrections():
    # floor(zeta * 4 * (1 - AP)): zeta 1 -> floor(1.33) = 1, floor(2.28) = 2;
    # zeta 0.5 -> floor(0.66) = 0, floor(1.14) = 1
    assert num_corrections(OBSERVED, AP, 1.).tolist() == [1, 2]
    assert num_corrections(OBSERVED, AP, .5).tolist() == [0, 1]
    bank = OPMLLabelBank(num_classes=2, num_samples=8)
    torch.testing.assert_close(bank.class_ap, torch.tensor([-1., -1.]))
    updater = OPMLLabelUpdater(zeta=1., correction_start_epoch=2)
    stats = updater.update(bank, SCORES, OBSERVED, 1, 4, 1)
    torch.testing.assert_close(bank.class_ap, AP)
    assert stats['mean_train_ap'] == pytest.approx(100 * float(AP.mean()))
    # epoch 1 is before the correction start: AP only
    assert corrected(bank) == [] and 'new_positives' not in stats


def test_correction_selects_top_unobserved_and_persists():
    bank = OPMLLabelBank(num_classes=2, num_samples=8)
    updater = OPMLLabelUpdater(zeta=1., correction_start_epoch=2)
    updater.update(bank, SCORES, OBSERVED, 1, 4, 1)
    stats = updater.update(bank, SCORES, OBSERVED, 2, 4, 1)
    # class 0: the best unobserved entry r4; class 1: r0 and r1
    assert corrected(bank) == [(0, 1), (1, 1), (4, 0)]
    assert stats['new_positives'] == 3
    # Epoch 3: r4 falls to the bottom of class 0 and r6 rises to the top:
    # ranking r6 r0 (P) r5 r1 (P) r2 (P) r3 (P) r7 r4, AP = (1/2 + 2/4 +
    # 3/5 + 4/6) / 4, floor(4 * (1 - AP)) = 1 -> r6. r4 stays corrected.
    scores = SCORES.clone()
    scores[4, 0], scores[6, 0] = .05, .96
    stats = updater.update(bank, scores, OBSERVED, 3, 4, 1)
    assert float(bank.class_ap[0]) == pytest.approx(
        (1 / 2 + 2 / 4 + 3 / 5 + 4 / 6) / 4)
    assert corrected(bank) == [(0, 1), (1, 1), (4, 0), (6, 0)]
    assert stats['new_positives'] == 1
    # an observed positive is never a candidate, whatever its score
    assert not (bank.pseudo_label.bool() & OBSERVED).any()


def test_zeta_zero_keeps_only_the_ap():
    bank = OPMLLabelBank(num_classes=2, num_samples=8)
    OPMLLabelUpdater(zeta=0.).update(bank, SCORES, OBSERVED, 3, 4, 1)
    torch.testing.assert_close(bank.class_ap, AP)
    assert corrected(bank) == []


def test_bank_entries_and_state_dict():
    bank = OPMLLabelBank(num_classes=2)
    bank.allocate(8)
    OPMLLabelUpdater(zeta=1.).update(bank, SCORES, OBSERVED, 1, 4, 1)
    entries = bank.entries(torch.tensor([4, 0]), torch.zeros(2, 2))
    assert set(entries) == {'pseudo_label', 'class_ap'}
    assert entries['pseudo_label'].tolist() == [[1, 0], [0, 1]]
    torch.testing.assert_close(entries['class_ap'], AP)
    # a fresh (empty) bank adopts a checkpoint's state
    fresh = OPMLLabelBank(num_classes=2)
    fresh.load_state_dict(bank.state_dict())
    assert corrected(fresh) == corrected(bank)
    torch.testing.assert_close(fresh.class_ap, AP)


def test_bad_input():
    for kwargs, name in ((dict(zeta=-0.1), 'zeta'), (dict(zeta=1.5), 'zeta'),
                         (dict(correction_start_epoch=0),
                          'correction_start_epoch')):
        with pytest.raises(ValueError, match=name):
            OPMLLabelUpdater(**kwargs)
    updater = OPMLLabelUpdater(zeta=.5, correction_start_epoch=6)
    with pytest.raises(ValueError, match=r'max_epochs - 1=5'):
        updater.check_schedule(1, 6)
    with pytest.raises(ValueError, match=r'warmup_epochs=3'):
        OPMLLabelUpdater(correction_start_epoch=2).check_schedule(3, 6)
    updater.check_schedule(1, 7)
    # without correction the start epoch does not matter
    OPMLLabelUpdater(zeta=0., correction_start_epoch=9).check_schedule(1, 6)
    with pytest.raises(ValueError, match='OPMLLabelBank'):
        updater.update(LabelBank(2, 8), SCORES, OBSERVED, 1, 4, 1)
