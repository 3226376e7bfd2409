"""Compact storage of the label bank: 2-bit states and float16/uint8 soft
labels, class blocks, checkpoints and conversion between modes."""
import pytest
import torch

from spml_mm.engine.label_bank_scoring import update_in_blocks
from spml_mm.models import LabelBank, OPMLLabelBank
from spml_mm.models.label_banks.batch import ScoredBatch
from spml_mm.models.label_banks.storage import (STORAGE_BYTES,
                                                decode_soft_labels,
                                                decode_states,
                                                encode_soft_labels,
                                                encode_states)
from spml_mm.models.label_banks.updaters import (AsymmetricPseudoLabeling,
                                                 OPMLLabelUpdater)
from tests.models.label_banks.test_label_bank import entries

N, C = 240, 13  # 13 classes: a block of 8 and a partial byte of 5
COMPACT = ('float16', 'uint8')


def test_state_codes():
    states = torch.tensor([[-1, 0, 1, 1, -1, 0], [0, 0, 0, 0, 0, 1]],
                          dtype=torch.int8)
    # class 4 i + j in bits 2j, 2j + 1 of byte i: -1 -> 3, 0 -> 0, 1 -> 1
    assert encode_states(states).tolist() == [[3 + 0 + 16 + 64, 3],
                                              [0, 4]]
    g = torch.Generator().manual_seed(0)
    for width in (1, 3, 4, 5, 600):
        states = torch.randint(-1, 2, (7, width), generator=g).to(torch.int8)
        codes = encode_states(states)
        assert codes.dtype == torch.uint8
        assert codes.shape == (7, -(-width // 4))
        assert torch.equal(decode_states(codes, width), states)


def test_soft_label_codes():
    t = torch.tensor([0., 1e-6, 0.001, 0.002, 0.31, 0.999, 1.])
    assert encode_soft_labels(t, 'uint8').tolist() == [0, 0, 0, 1, 79, 255,
                                                       255]
    for storage, bound in (('uint8', torch.full_like(t, 0.5 / 255)),
                           ('float16', t * 2**-11 + 2**-25)):
        decoded = decode_soft_labels(encode_soft_labels(t, storage))
        assert decoded.dtype == torch.float32
        assert ((decoded - t).abs() <= bound).all()


@pytest.mark.parametrize('storage', ['full', *COMPACT])
def test_bytes_per_entry(storage):
    bank = LabelBank(num_classes=600, num_samples=1000, storage=storage)
    size = sum(b.numel() * b.element_size() for b in bank.buffers())
    assert size == 1000 * 600 * STORAGE_BYTES[storage]
    assert bank.num_samples == 1000


@pytest.mark.parametrize('storage', ['full', *COMPACT])
def test_new_banks_are_unlabelled(storage):
    built, sized = LabelBank(C, 3, storage=storage), LabelBank(C,
                                                               storage=storage)
    sized.allocate(3)  # how the hook sizes the head's empty bank
    for bank in (built, sized):
        rows = entries(bank, [0, 1, 2])
        assert not rows['pseudo_label'].any() and not rows['soft_label'].any()


def random_run(seed=0):
    """Scores of two epochs and observed labels, in shuffled batches."""
    g = torch.Generator().manual_seed(seed)
    observed = torch.zeros(N, C, dtype=torch.bool)
    observed[torch.arange(N), torch.randint(C, (N, ), generator=g)] = True
    full = observed | (torch.rand(N, C, generator=g) < 0.2)
    epochs = []
    for _ in range(2):
        scores = torch.rand(N, C, generator=g)
        # ties across entries, as low-precision scores have them
        scores[:40] = scores[:40].mul(64).round().div(64)
        order = torch.randperm(N, generator=g)
        epochs.append([ScoredBatch(i, scores[i], observed[i], full[i])
                       for i in order.split(32)])
    return epochs, observed


def whole_update(bank, updater, epochs):
    """The reference: the updater on all classes at once (the hook before
    it gathered in blocks)."""
    for epoch, records in enumerate(epochs, 1):
        index = torch.cat([r.index for r in records])
        scores = torch.empty(N, C)
        scores[index] = torch.cat([r.scores for r in records])
        observed = torch.empty(N, C, dtype=torch.bool)
        observed[index] = torch.cat([r.observed for r in records])
        updater.update(bank, scores, observed, epoch, 5, 1)


def test_compact_banks_select_the_same_pseudo_labels():
    epochs, _ = random_run()
    apl = AsymmetricPseudoLabeling(0.9)
    reference = LabelBank(C, N)
    whole_update(reference, apl, epochs)
    assert (reference.pseudo_label == -1).sum() > 0
    # blocks of 8 classes: 8 x 240 x 4 bytes
    block_mb = 8 * N * 4 / 2**20
    for storage in ('full', *COMPACT):
        bank = LabelBank(C, N, storage=storage)
        for epoch, records in enumerate(epochs, 1):
            stats = update_in_blocks(bank, records, apl, epoch, 5, 1,
                                     max_gather_mb=block_mb)
        with bank.class_block(0, 8) as first, bank.class_block(8, C) as last:
            states = torch.cat([first.pseudo_label, last.pseudo_label], 1)
            soft = torch.cat([first.soft_label, last.soft_label], 1)
        assert torch.equal(states, reference.pseudo_label), storage
        assert stats['pseudo_negatives'] == int((states == -1).sum())
        # full labels came with every record: precision and recall are
        # reported
        assert 0 <= stats['pseudo_negative_acc'] <= 100
        assert 0 < stats['pseudo_negative_recall'] <= 100
        error = (soft - reference.soft_label).abs()
        if storage == 'full':
            assert torch.equal(soft, reference.soft_label)
        elif storage == 'float16':
            assert (error <= reference.soft_label * 2**-11).all()
        else:
            assert (error <= 0.5 / 255 + 1e-7).all()
            assert error.max() > 0  # the rounding is real
        # the loss reads the same states and the decoded soft labels
        rows = entries(bank, [5, 0, 239])
        assert torch.equal(rows['pseudo_label'], states[[5, 0, 239]])
        assert torch.equal(rows['soft_label'], soft[[5, 0, 239]])


def test_opml_correction_in_blocks_equals_one_update():
    epochs, _ = random_run(1)
    updater = OPMLLabelUpdater(zeta=1., correction_start_epoch=1)
    reference = OPMLLabelBank(C, N)
    whole_update(reference, updater, epochs)
    bank = OPMLLabelBank(C, N)
    for epoch, records in enumerate(epochs, 1):
        stats = update_in_blocks(bank, records, updater, epoch, 5, 1,
                                 max_gather_mb=8 * N * 4 / 2**20)
    assert (bank.pseudo_label == 1).sum() > 0
    assert torch.equal(bank.pseudo_label, reference.pseudo_label)
    torch.testing.assert_close(bank.class_ap, reference.class_ap)
    # the mean AP over classes, from two blocks of 8 and 5 classes
    assert stats['mean_train_ap'] == pytest.approx(
        100 * float(reference.class_ap.mean()))


def filled(storage):
    bank = LabelBank(C, 6, storage=storage)
    with bank.class_block(0, C) as block:
        block.pseudo_label[[0, 2, 5, 5], [1, 12, 0, 9]] = torch.tensor(
            [-1, -1, 1, -1], dtype=torch.int8)
        block.soft_label[[0, 2, 5], [1, 12, 9]] = torch.tensor(
            [0.1, 0.02, 0.3])
    return bank


def decoded(bank):
    with bank.class_block(0, C) as block:
        return block.pseudo_label.clone(), block.soft_label.clone()


@pytest.mark.parametrize('storage', COMPACT)
def test_compact_checkpoint_round_trip(storage):
    bank = filled(storage)
    state = bank.state_dict()
    assert set(state) == {'state_codes', 'soft_label_code'}
    empty = LabelBank(C, storage=storage)  # tools/test.py: adopts the size
    empty.load_state_dict(state)
    for key, value in state.items():
        assert torch.equal(empty.state_dict()[key], value)
    with pytest.raises(ValueError, match='holds 6 samples but the training '
                       'set has 7'):
        LabelBank(C, 7, storage=storage).load_state_dict(state)


@pytest.mark.parametrize('source,target', [('full', 'uint8'),
                                           ('uint8', 'full'),
                                           ('float16', 'uint8'),
                                           ('full', 'float16')])
def test_checkpoints_convert_between_storages(source, target):
    states, soft = decoded(filled(source))
    bank = LabelBank(C, storage=target)
    bank.load_state_dict(filled(source).state_dict())
    got_states, got_soft = decoded(bank)
    assert torch.equal(got_states, states)
    expected = soft if target == 'full' else decode_soft_labels(
        encode_soft_labels(soft, target))
    assert torch.equal(got_soft, expected)


def test_bad_storage_and_blocks():
    with pytest.raises(ValueError, match="storage must be one of"):
        LabelBank(C, storage='int4')
    bank = LabelBank(C, N, storage='uint8')
    for start, end in ((3, 8), (0, 6), (8, 14), (8, 8)):
        with pytest.raises(ValueError, match='not aligned'):
            with bank.class_block(start, end):
                pass
    with LabelBank(C, N).class_block(3, 12) as block:  # full: any block
        assert block.pseudo_label.shape == (N, 9)
