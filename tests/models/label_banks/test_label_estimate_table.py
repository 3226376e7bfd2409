import math

import pytest
import torch
from mmpretrain.structures import DataSample

from spml_mm.models import LabelEstimateTable
from spml_mm.models.heads import SPMLLinearClsHead


def samples(indices, positives):
    return [DataSample(metainfo=dict(sample_idx=i)).set_gt_label([c])
            for i, c in zip(indices, positives)]


def entries(table, indices, positives, negatives=None):
    """The table's entries for samples ``indices`` observing one positive
    each (``positives``) and, optionally, lists of negatives."""
    target = torch.zeros(len(indices), 3)
    target[torch.arange(len(indices)), positives] = 1
    negative = None
    if negatives is not None:
        negative = torch.zeros(len(indices), 3, dtype=torch.bool)
        for row, classes in zip(negative, negatives):
            row[classes] = True
    return table.entries(torch.tensor(indices), target, negative)


def logit(p):
    return math.log(p / (1 - p))


BATCHES = [([0, 2], [1, 0]), ([3, 1], [2, 2]), ([2, 4], [0, 1]),
           ([0, 3], [1, 2])]


def grads(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(2, 3, generator=g)


def test_initialisation():
    torch.manual_seed(0)
    table = LabelEstimateTable(num_classes=3, lr=0.1, num_samples=50)
    assert table.estimate_logits.min() >= logit(0.4)
    assert table.estimate_logits.max() <= logit(0.6)
    before = table.estimate_logits.clone()
    rows = entries(table, [7, 9], [2, 0])['estimate_logits']
    assert rows[0, 2] == rows[1, 0] == pytest.approx(logit(0.995))
    torch.testing.assert_close(rows[0, :2], before[7, :2])
    # set once: a later visit reads the row as it is
    table.estimate_logits[7, 2] = 0.
    again = entries(table, [7], [2])['estimate_logits']
    assert again[0, 2] == 0.


def test_observed_negatives_start_at_logit_0_005():
    torch.manual_seed(0)
    table = LabelEstimateTable(num_classes=3, lr=0.1, num_samples=10)
    before = table.estimate_logits.clone()
    rows = entries(table, [4, 5], [2, 0],
                   [[0], [1, 2]])['estimate_logits']
    expected = torch.tensor([[logit(0.005), before[4, 1], logit(0.995)],
                             [logit(0.995), logit(0.005), logit(0.005)]])
    torch.testing.assert_close(rows, expected)


def test_dense_adam_is_torch_adam_over_the_whole_table():
    torch.manual_seed(0)
    table = LabelEstimateTable(num_classes=3, lr=0.05, num_samples=5)
    param = torch.nn.Parameter(table.estimate_logits.clone())
    adam = torch.optim.Adam([param], lr=0.05)
    for step, (index, positives) in enumerate(BATCHES):
        rows = entries(table, index, positives)
        with torch.no_grad():
            param[index] = rows['estimate_logits']
        rows['step_estimates'](grads(step))
        grad = torch.zeros_like(param)
        grad[index] = grads(step)
        param.grad = grad
        adam.step()
        torch.testing.assert_close(table.estimate_logits, param.detach())
        if step == 1:
            row_1 = table.estimate_logits[1].clone()
    # row 1 was in the second batch only, yet kept moving on its momentum
    assert (table.estimate_logits[1] != row_1).all()


def test_per_row_adam_steps_each_row_only_with_its_batches():
    torch.manual_seed(0)
    table = LabelEstimateTable(num_classes=3, lr=0.05, adam='per_row',
                               num_samples=5)
    rows = [torch.nn.Parameter(r.clone()) for r in table.estimate_logits]
    adams = [torch.optim.Adam([r], lr=0.05) for r in rows]
    for step, (index, positives) in enumerate(BATCHES):
        batch = entries(table, index, positives)
        for i, row in zip(index, batch['estimate_logits']):
            with torch.no_grad():
                rows[i].copy_(row)
        batch['step_estimates'](grads(step))
        for i, grad in zip(index, grads(step)):
            rows[i].grad = grad.clone()
            adams[i].step()
        torch.testing.assert_close(table.estimate_logits,
                                   torch.stack([r.detach() for r in rows]))
    assert table.steps.tolist() == [2, 1, 2, 2, 1]


def test_head_trains_the_table_and_checkpoints_it():
    head = SPMLLinearClsHead(
        num_classes=3, in_channels=4,
        loss=dict(type='ROLELoss', expected_positives=1.),
        label_bank=dict(type='LabelEstimateTable', lr=0.1))
    head.label_bank.allocate(6)
    before = head.label_bank.estimate_logits.clone()
    head.loss((torch.randn(2, 4), ), samples([4, 1], [0, 2]))
    moved = (head.label_bank.estimate_logits != before).any(1)
    assert moved.tolist() == [False, True, False, False, True, False]
    # an empty table (tools/test.py) adopts the checkpoint's size
    other = SPMLLinearClsHead(
        num_classes=3, in_channels=4,
        loss=dict(type='ROLELoss', expected_positives=1.),
        label_bank=dict(type='LabelEstimateTable', lr=0.1))
    other.load_state_dict(head.state_dict())
    torch.testing.assert_close(other.label_bank.estimate_logits,
                               head.label_bank.estimate_logits)
    with pytest.raises(ValueError, match='estimate_logits'):
        SPMLLinearClsHead(num_classes=3, in_channels=4,
                          loss=dict(type='ANLoss'),
                          label_bank=dict(type='LabelEstimateTable', lr=0.1))


def test_bad_settings():
    with pytest.raises(ValueError, match='lr must be'):
        LabelEstimateTable(num_classes=3, lr=0)
    with pytest.raises(ValueError, match='adam must be one of'):
        LabelEstimateTable(num_classes=3, lr=1., adam='sparse')
    table = LabelEstimateTable(num_classes=3, lr=1., num_samples=4)
    with pytest.raises(ValueError, match='holds 4 samples'):
        table.allocate(5)
    with pytest.raises(RuntimeError, match='SPMLSampleStateHook'):
        entries(LabelEstimateTable(num_classes=3, lr=1.), [0], [0])
