import pytest
import torch
from mmengine.runner.checkpoint import load_checkpoint
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from spml_mm.models import LabelBank
from spml_mm.models.label_banks.batch import sample_indices
from spml_mm.models.losses import em_loss


def samples(indices, labels=None, full=None):
    out = []
    for k, idx in enumerate(indices):
        sample = DataSample(metainfo=dict(sample_idx=idx))
        sample.set_gt_label(labels[k] if labels else [0])
        if full is not None:
            sample.set_field(full[k], 'gt_label_full')
        out.append(sample)
    return out


def entries(bank, indices):
    """The bank's entries for the samples ``indices`` (their targets, which
    a LabelBank does not read, empty)."""
    return bank.entries(
        torch.tensor(indices), torch.zeros(len(indices), bank.num_classes))


def head(label_bank=dict(type='LabelBank'), loss=dict(type='EMLoss')):
    cfg = dict(type='SPMLLinearClsHead', num_classes=3, in_channels=4,
               loss=loss)
    if label_bank is not None:
        cfg['label_bank'] = label_bank
    return MODELS.build(cfg)


def filled_bank(num_samples=5):
    bank = LabelBank(num_classes=3, num_samples=num_samples)
    bank.pseudo_label[[0, 2, 4], [1, 2, 0]] = -1
    bank.soft_label[[0, 2, 4], [1, 2, 0]] = torch.tensor([0.1, 0.2, 0.3])
    return bank


def test_entries_follow_sample_idx():
    bank = filled_bank()
    rows = entries(bank, [4, 0, 0])
    assert rows['pseudo_label'].tolist() == [[-1, 0, 0], [0, -1, 0],
                                            [0, -1, 0]]
    torch.testing.assert_close(rows['soft_label'][:, :2],
                               torch.tensor([[0.3, 0.], [0., 0.1],
                                             [0., 0.1]]))


def test_head_passes_the_bank_to_the_loss():
    model = head()
    model.label_bank.allocate(5)
    model.label_bank.load_state_dict(filled_bank().state_dict())
    feats = (torch.randn(2, 4), )
    data = samples([2, 4], labels=[[0], [1]])
    target = torch.tensor([[1., 0., 0.], [0., 1., 0.]])
    expected = em_loss(model(feats), target, 0.1, 0.2,
                       torch.tensor([[0, 0, 1], [1, 0, 0]]).bool(),
                       torch.tensor([[0., 0., 0.2], [0.3, 0., 0.]]))
    torch.testing.assert_close(model.loss(feats, data)['loss'], expected)
    # the bank is untouched by the test-time path
    assert model.predict(feats)[0].pred_score.shape == (3, )


def test_recording():
    bank = LabelBank(num_classes=3, num_samples=5)
    logits, target = torch.randn(2, 3), torch.eye(3)[:2]
    index = torch.tensor([1, 3])
    # not recording: ignored
    bank.record(index, logits, target, samples([1, 3]))
    bank.start_recording()
    bank.record(index, logits, target, samples([1, 3], full=[[0, 2], [1]]))
    (index, scores, observed, full), = bank.stop_recording()
    assert index.tolist() == [1, 3]
    torch.testing.assert_close(scores, torch.sigmoid(logits))
    assert observed.tolist() == target.bool().tolist()
    assert full.tolist() == [[True, False, True], [False, True, False]]
    assert bank.stop_recording() == []
    # partial labels: the record keeps the observed positives only
    bank.start_recording()
    bank.record(index, logits, torch.tensor([[1., -1., 0.], [-1., 0., 1.]]),
                samples([1, 3]))
    record, = bank.stop_recording()
    assert record.observed.tolist() == [[True, False, False],
                                        [False, False, True]]


def test_checkpoint_round_trip(tmp_path):
    trained = head()
    trained.label_bank.allocate(5)
    trained.label_bank.load_state_dict(filled_bank().state_dict())
    path = str(tmp_path / 'head.pth')
    torch.save(dict(state_dict=trained.state_dict()), path)

    # an empty bank (tools/test.py, inference) adopts the stored one
    fresh = head()
    load_checkpoint(fresh, path)
    assert fresh.label_bank.num_samples == 5
    for key in ('pseudo_label', 'soft_label'):
        assert torch.equal(
            getattr(fresh.label_bank, key),
            getattr(trained.label_bank, key))
    # a bank sized for the same training set (--resume) loads it
    sized = head()
    sized.label_bank.allocate(5)
    load_checkpoint(sized, path)
    assert torch.equal(sized.label_bank.soft_label,
                       trained.label_bank.soft_label)
    # a head without a bank ignores it; a bank without a stored one stays
    load_checkpoint(head(label_bank=None), path)
    weights = str(tmp_path / 'weights.pth')
    torch.save(dict(state_dict=head(label_bank=None).state_dict()), weights)
    empty = head()
    load_checkpoint(empty, weights)
    assert empty.label_bank.num_samples == 0


def test_bank_of_another_dataset_is_refused(tmp_path):
    path = str(tmp_path / 'head.pth')
    trained = head()
    trained.label_bank.allocate(5)
    torch.save(dict(state_dict=trained.state_dict()), path)
    other = head()
    other.label_bank.allocate(6)
    with pytest.raises(ValueError, match=r"checkpoint's label bank "
                       r'\(label_bank\) holds 5 samples but the training '
                       'set has 6'):
        load_checkpoint(other, path)
    with pytest.raises(ValueError, match='holds 6 samples but the training '
                       'set has 7'):
        other.label_bank.allocate(7)


def test_bad_input():
    with pytest.raises(ValueError, match=r'ANLoss takes no label bank '
                       r'entries \(pseudo_label, soft_label\)'):
        head(loss=dict(type='ANLoss'))
    bank = LabelBank(num_classes=3)
    with pytest.raises(RuntimeError, match='add SPMLPseudoLabelHook'):
        entries(bank, [0])
    bank.allocate(5)
    with pytest.raises(ValueError, match='sample_idx 5 is outside the label '
                       'bank of 5 samples'):
        entries(bank, [1, 5])
    with pytest.raises(ValueError, match='no sample_idx metainfo'):
        sample_indices([DataSample().set_gt_label([0])])
    with pytest.raises(ValueError, match='num_classes >= 1'):
        LabelBank(num_classes=0)
