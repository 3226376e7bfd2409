import pytest
import torch

from spml_mm.models import LabelBank
from spml_mm.models.label_banks.updaters import (AsymmetricPseudoLabeling,
                                                 lowest_per_class)


# 8 samples, 3 classes; the observed positive of each row
POSITIVE = [0, 1, 2, 0, 1, 0, 1, 0]
SCORES = torch.tensor([
    [0.01, 0.30, 0.20],
    [0.50, 0.02, 0.10],
    [0.40, 0.60, 0.03],
    [0.05, 0.15, 0.70],
    [0.25, 0.04, 0.35],
    [0.08, 0.45, 0.05],
    [0.12, 0.01, 0.15],
    [0.02, 0.55, 0.80],
])


def observed():
    obs = torch.zeros(8, 3, dtype=torch.bool)
    obs[torch.arange(8), torch.tensor(POSITIVE)] = True
    return obs


def negatives(bank):
    return sorted(map(tuple, (bank.pseudo_label == -1).nonzero().tolist()))


def test_hand_built_rounds():
    """U_c = 4, 5, 7 unobserved entries; theta 0.9 over T - T_w = 2 rounds
    selects int(0.9 * U_c / 2) = 1, 2, 3 entries per class and round."""
    apl = AsymmetricPseudoLabeling(negative_proportion=0.9)
    bank = LabelBank(num_classes=3, num_samples=8)
    assert apl.num_per_epoch(observed(), 2).tolist() == [1, 2, 3]

    stats = apl.update(bank, SCORES, observed(), epoch=2, max_epochs=4,
                       warmup_epochs=2)
    # class 0: the observed rows 0 and 7 score lowest but are positives
    first = [(6, 0), (0, 1), (3, 1), (1, 2), (5, 2), (6, 2)]
    assert stats == dict(new_negatives=6)
    assert negatives(bank) == sorted(first)
    for r, c in first:
        assert bank.soft_label[r, c] == SCORES[r, c]
    assert bank.soft_label[bank.pseudo_label == 0].eq(0).all()

    # second round: the labelled entries now score 0 but are not reselected,
    # and keep their first soft label
    scores = SCORES.clone()
    for r, c in first:
        scores[r, c] = 0.
    apl.update(bank, scores, observed(), 3, 4, 2)
    second = [(4, 0), (5, 1), (7, 1), (0, 2), (3, 2), (4, 2)]
    assert negatives(bank) == sorted(first + second)
    for r, c in first:
        assert bank.soft_label[r, c] == SCORES[r, c]
    for r, c in second:
        assert bank.soft_label[r, c] == scores[r, c]

    # a third round finds fewer free entries than it may select
    apl.update(bank, scores, observed(), 3, 4, 2)
    third = [(2, 0), (2, 1), (7, 2)]
    assert negatives(bank) == sorted(first + second + third)
    # every unobserved entry but one of class 0 is now labelled; the
    # positives never are
    assert not (bank.pseudo_label.bool() & observed()).any()
    assert (bank.pseudo_label == 0).sum() == 8 + 1


def test_count_is_the_release_integer():
    apl = AsymmetricPseudoLabeling(0.9)
    for theta in (0.9, 0.3, 1.0):
        apl.negative_proportion = theta
        for rounds in range(1, 8):
            num_pos = torch.arange(0, 2000, 7)
            obs = torch.arange(2000)[:, None] < num_pos[None]
            expected = [int(theta * (2000 - n) / rounds) for n in num_pos]
            assert apl.num_per_epoch(obs, rounds).tolist() == expected


def test_select_respects_zero_counts_and_ties():
    scores = torch.tensor([[0.5, 0.2], [0.5, 0.2], [0.1, 0.9]])
    free = torch.ones(3, 2, dtype=torch.bool)
    rows, cols = lowest_per_class(scores, free,
                                  torch.tensor([2, 0])).nonzero().t()
    assert cols.tolist() == [0, 0]
    # the lowest score, then the first of the two tied ones
    assert rows.tolist() == [0, 2]
    assert not lowest_per_class(scores, free, torch.tensor([0, 0])).any()


def test_bad_theta():
    for theta in (0, -0.1, 1.01, '0.9'):
        with pytest.raises(ValueError, match=r'negative_proportion \(theta\) '
                           r'must be in \(0, 1\]'):
            AsymmetricPseudoLabeling(negative_proportion=theta)
