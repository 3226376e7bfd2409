import numpy as np
import pytest
import torch
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401
from tests.models.losses import reference


def samples(labels, negatives=None):
    data = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label(lab)
        for i, lab in enumerate(labels)
    ]
    for sample, neg in zip(data, negatives or []):
        # as PackInputs packs it: the dataset's index array
        sample.set_field(np.array(neg, dtype=np.int64), 'gt_label_neg')
    return data


def test_loss_uses_the_observed_matrix():
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    feats = (torch.randn(2, 3), )
    data = samples([[1], [0, 3]])
    target = torch.tensor([[0., 1., 0., 0.], [1., 0., 0., 1.]])
    torch.testing.assert_close(head.observed_target(data), target)
    # an empty gt_label_neg, as a single-positive sample is packed, is none
    torch.testing.assert_close(
        head.observed_target(samples([[1], [0, 3]], negatives=[[], []])),
        target)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        head(feats), target)
    torch.testing.assert_close(head.loss(feats, data)['loss'], expected)
    preds = head.predict(feats)
    torch.testing.assert_close(preds[0].pred_score,
                               torch.sigmoid(head(feats))[0])


def test_observed_negatives_are_minus_one():
    """Partial labels: gt_label_neg becomes -1 in s, which the loss reads
    as a known negative (WAN: weight 1 where unobserved labels weigh 0.1).
    """
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3,
             loss=dict(type='ANLoss', unobserved_weight=0.1)))
    feats = (torch.randn(3, 3), )
    data = samples([[1], [0, 3], [2]], negatives=[[0, 2], [], [3]])
    target = torch.tensor([[-1., 1., -1., 0.], [1., 0., 0., 1.],
                           [0., 0., 1., -1.]])
    torch.testing.assert_close(head.observed_target(data), target)
    expected = reference.an(head(feats).double(), target.double(), lam=0.1)
    torch.testing.assert_close(head.loss(feats, data)['loss'].double(),
                               expected)


def test_loss_gets_the_negatives_mask_only_when_the_batch_has_some():
    """The loss sees 0/1 positives; observed_negative is passed for partial
    batches only, so single-positive batches run the plain formulas."""
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    calls = []

    class Recorder(torch.nn.Module):

        def forward(self, cls_score, target, **kwargs):
            calls.append((target, kwargs))
            return cls_score.sum()

    head.loss_module = Recorder()
    feats = (torch.randn(2, 3), )
    head.loss(feats, samples([[1], [0, 3]]))
    head.loss(feats, samples([[1], [0, 3]], negatives=[[2], []]))
    (single, single_kwargs), (partial, partial_kwargs) = calls
    assert single_kwargs == {}
    positives = torch.tensor([[0., 1., 0., 0.], [1., 0., 0., 1.]])
    torch.testing.assert_close(single, positives)
    torch.testing.assert_close(partial, positives)
    assert partial_kwargs['observed_negative'].tolist() == [
        [False, False, True, False], [False] * 4]


def reference_target(labels, negatives, num_classes):
    """The observed matrix, one sample at a time on the host."""
    target = torch.zeros(len(labels), num_classes)
    for row, lab, neg in zip(target, labels, negatives):
        row[neg] = -1
        row[lab] = 1
    return target


@pytest.mark.parametrize('labels,negatives', [
    ([[3], [0], [4], [4]], [[], [], [], []]),
    ([[1, 2], [0, 4], [3, 2], [0, 1]], [[0], [1], [4], [2]]),
    ([[1], [0, 3, 4], [2], []], [[0, 2], [], [3], [1]]),
])
def test_target_is_built_where_the_labels_are(labels, negatives):
    """Equal lengths (one stack) and mixed lengths (a row index from the
    lengths) give the per-sample matrix; the labels may already be on the
    device (the data preprocessor moved them) or still on the host."""
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=5, in_channels=3))
    expected = reference_target(labels, negatives, 5)
    data = samples(labels, negatives=negatives)
    torch.testing.assert_close(head.observed_target(data), expected)
    for sample in data:
        sample.set_gt_label(sample.gt_label.to('meta'))
    meta_head = head.to('meta')
    target = meta_head.observed_target(data)
    assert target.device.type == 'meta' and target.shape == (4, 5)


def test_an_index_outside_the_classes_is_not_written_silently():
    """Unchecked on the host, an index outside the classes still fails in
    the scatter (on a GPU as a device-side assertion)."""
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    with pytest.raises(RuntimeError, match='out of bounds'):
        head.loss((torch.randn(2, 3), ), samples([[1], [4]]))


def test_default_initialisation_is_torch_linear():
    """The releases keep nn.Linear's default initialisation, uniform in
    +-1/sqrt(in_channels); MMPretrain's Normal(std=0.01) only on request."""
    torch.manual_seed(0)
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=80, in_channels=256))
    head.init_weights()
    weight, bound = head.fc.weight.detach(), 1 / 256**0.5
    assert weight.abs().max() <= bound
    # uniform on [-b, b]: standard deviation b / sqrt(3) = 0.036
    assert float(weight.std()) == pytest.approx(bound / 3**0.5, rel=0.02)
    bias = head.fc.bias.detach()
    assert bias.abs().max() <= bound and bias.std() > 0.02

    torch.manual_seed(0)
    normal = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=80, in_channels=256,
             init_cfg=dict(type='Normal', layer='Linear', std=0.01)))
    normal.init_weights()
    assert float(normal.fc.weight.detach().std()) == pytest.approx(
        0.01, rel=0.02)
    assert (normal.fc.bias == 0).all()


HEADS = {
    'AN': dict(loss=dict(type='ANLoss')),
    'GR': dict(loss=dict(type='GRLoss')),
    'EM + APL': dict(loss=dict(type='EMLoss'),
                     label_bank=dict(type='LabelBank')),
    'LASD': dict(loss=dict(type='LASDLoss', lambda_pos=0.1, tau=0.9,
                           lambda_neg=0.1),
                 consistency=dict(type='ViewConsistency', alpha=0.7)),
    'OPML-SP': dict(loss=dict(type='OPMLLoss', rank_weight=0.01,
                              soft_labels=True),
                    label_bank=dict(type='OPMLLabelBank')),
    'partial-BCE': dict(loss=dict(type='PartialBCELoss')),
    'ROLE': dict(loss=dict(type='ROLELoss', expected_positives=2.),
                 label_bank=dict(type='LabelEstimateTable', lr=1e-3)),
}


@pytest.mark.parametrize('name', HEADS)
def test_training_step_never_reads_device_values(name):
    """The head's loss and backward run on the meta device, whose tensors
    have no values: any host sync (``.item()``, ``if tensor.any()``, a
    value-dependent shape) raises there. On a GPU such a read would stall
    every iteration."""
    head = MODELS.build(dict(type='SPMLLinearClsHead', num_classes=5,
                             in_channels=8, **HEADS[name]))
    if head.label_bank is not None:
        head.label_bank.allocate(6)
    head = head.to('meta')
    views = 3 if name == 'LASD' else 1
    feats = torch.randn(6 * views, 8, device='meta')
    # partial labels: one positive and two negatives per sample
    data = samples([[i % 5] for i in range(6)],
                   negatives=[[(i + 1) % 5, (i + 2) % 5] for i in range(6)])
    losses = head.loss((feats, ), data)
    sum(losses.values()).backward()
    assert head.fc.weight.grad.shape == (5, 8)
    assert head.fc.weight.grad.device.type == 'meta'


@pytest.mark.parametrize('bank', ['LabelBank', 'LabelEstimateTable'])
def test_a_bank_of_other_classes_is_refused_when_built(bank):
    """A bank sized for 7 classes under a 10-class head used to fail at the
    first iteration (ROLE: a raw broadcast error)."""
    loss = dict(type='ROLELoss', expected_positives=1.5) if bank == 'LabelEstimateTable' else dict(
        type='EMLoss')
    with pytest.raises(ValueError,
                       match=r'label_bank.num_classes=7 but '
                       r'model.head.num_classes=10; remove'):
        MODELS.build(dict(type='SPMLLinearClsHead', num_classes=10,
                          in_channels=3, loss=loss,
                          label_bank=dict(type=bank, num_classes=7)))


def test_calibrated_thresholds_decide_per_class():
    thresholds = [0.2, 0.5, 0.9, 0.0]
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3,
             thresholds=thresholds))
    plain = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    plain.load_state_dict(head.state_dict())  # no extra state: fits
    feats = (torch.randn(64, 3), )
    raw = torch.sigmoid(head(feats))
    preds = head.predict(feats)
    for sample, r in zip(preds, raw):
        torch.testing.assert_close(sample.pred_score, r)
        expected = torch.nonzero(r >= torch.tensor(thresholds)).view(-1)
        torch.testing.assert_close(sample.pred_label, expected)
    assert len(preds[0].pred_label) >= 1  # t = 0: class 3 always
    for sample, r in zip(plain.predict(feats), raw):
        torch.testing.assert_close(sample.pred_label,
                                   torch.nonzero(r >= 0.5).view(-1))


@pytest.mark.parametrize('options, message', [
    (dict(thresholds=[0.5, 0.5]), 'must be 4 numbers in'),
    (dict(thresholds=[0.5, 0.5, 1.5, 0.5]), r'in \[0, 1\]'),
    (dict(thresholds=[0.5, float('nan'), 0.5, 0.5]), r'in \[0, 1\]'),
    (dict(thresholds=[0.5] * 4, topk=2), 'both choose the predicted labels'),
])
def test_bad_thresholds_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        MODELS.build(dict(type='SPMLLinearClsHead', num_classes=4,
                          in_channels=3, **options))
