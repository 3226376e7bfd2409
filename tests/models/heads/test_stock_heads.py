"""The stateless SPML losses as ``loss=`` of MMPretrain's own multi-label
heads, and the stateful ones refused there with the head to use.

MMPretrain's heads build the multi-hot target from ``gt_label`` (for
single-positive data: one 1 per row, the observed positive) and call
``loss(cls_score, target, avg_factor=batch_size)``.
"""
import pytest
import torch
from mmengine.optim import build_optim_wrapper
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401  (registers the plugin)

NUM_CLASSES = 10

#: Every loss that needs no per-sample state.
STATELESS = {
    'AN': dict(type='ANLoss'),
    'AN-LS': dict(type='ANLoss', label_smoothing=0.1),
    'WAN': dict(type='ANLoss', unobserved_weight='wan'),
    'GR': dict(type='GRLoss', w=(0., 10.), b=(-2., -8.)),
    'EM': dict(type='EMLoss', alpha=0.2),
    'LASD': dict(type='LASDLoss', lambda_pos=0.1, tau=0.9,
                 avg_positives=2.05, num_classes=NUM_CLASSES),
    'Hill': dict(type='UnifiedSPMLLoss', preset='hill'),
    'SPLC': dict(type='UnifiedSPMLLoss', preset='splc'),
    'EN': dict(type='UnifiedSPMLLoss', preset='en'),
    'OPML (loss only)': dict(type='OPMLLoss', a=0.5, b=0.5),
    'EPR': dict(type='EPRLoss', expected_positives=2.05),
    'LL-R': dict(type='LLLoss', scheme='LL-R', rate=0.05),
    'LL-Ct': dict(type='LLLoss', scheme='LL-Ct', rate=0.05),
}

#: MMPretrain's multi-label heads on the demo VGG's 256-channel features:
#: the linear head and CSRA on the feature map / pooled features, the plain
#: head on class scores made by a linear neck.
HEADS = {
    'MultiLabelLinearClsHead': (
        dict(type='GlobalAveragePooling'),
        dict(type='MultiLabelLinearClsHead', in_channels=256)),
    'MultiLabelClsHead': (
        [dict(type='GlobalAveragePooling'),
         dict(type='LinearNeck', in_channels=256, out_channels=NUM_CLASSES)],
        dict(type='MultiLabelClsHead')),
    'CSRAClsHead': (
        None,
        dict(type='CSRAClsHead', in_channels=256, num_heads=1, lam=0.1)),
}


def build(head_name, loss):
    neck, head = HEADS[head_name]
    head = dict(head, loss=loss)
    if head_name != 'MultiLabelClsHead':
        head['num_classes'] = NUM_CLASSES
    model = MODELS.build(
        dict(
            type='ImageClassifier',
            backbone=dict(
                type='VGG', depth=11, num_stages=3, dilations=(1, 1, 1),
                out_indices=(2, ), norm_cfg=dict(type='BN')),
            neck=neck,
            head=head))
    for module in model.modules():
        if callable(getattr(module, 'set_epoch', None)):
            module.set_epoch(0, 6)
    return model


def single_positive_batch(positives):
    samples = []
    for idx, positive in enumerate(positives):
        sample = DataSample(metainfo=dict(sample_idx=idx))
        sample.set_gt_label([positive])
        samples.append(sample)
    inputs = torch.rand(len(samples), 3, 48, 48, generator=torch.Generator()
                        .manual_seed(0)) * 255
    return dict(inputs=inputs, data_samples=samples)


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize('head_name', sorted(HEADS))
@pytest.mark.parametrize('loss_name', sorted(STATELESS))
def test_one_training_step_in_a_stock_head(head_name, loss_name):
    torch.manual_seed(0)
    model = build(head_name, STATELESS[loss_name])
    model.train()
    optim_wrapper = build_optim_wrapper(
        model, dict(optimizer=dict(type='Adam', lr=1e-3)))
    # MultiLabelClsHead has no parameters: its class scores are the neck's
    trained = model.head if head_name != 'MultiLabelClsHead' else model.neck
    before = [p.detach().clone() for p in trained.parameters()]

    losses = model.train_step(
        single_positive_batch([1, 4, 4, 9]), optim_wrapper)

    assert set(losses) == {'loss'}
    assert torch.isfinite(losses['loss'])
    assert all(not torch.equal(before, after.detach())
               for before, after in zip(before, trained.parameters()))


@pytest.mark.parametrize('loss_name', sorted(STATELESS))
def test_stock_linear_head_gives_the_spml_head_loss(loss_name):
    """Same weights, same batch: MultiLabelLinearClsHead's loss equals
    SPMLLinearClsHead's (the multi-hot target of a single positive is the
    observed 0/1 matrix, and avg_factor does not rescale)."""
    loss = STATELESS[loss_name]
    stock = MODELS.build(
        dict(type='MultiLabelLinearClsHead', num_classes=NUM_CLASSES,
             in_channels=8, loss=loss))
    spml = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=NUM_CLASSES,
             in_channels=8, loss=loss))
    spml.load_state_dict(stock.state_dict())
    for head in (stock, spml):
        if hasattr(head.loss_module, 'set_epoch'):
            head.loss_module.set_epoch(2, 6)
    feats = (torch.randn(4, 8, generator=torch.Generator().manual_seed(1)) *
             3, )
    samples = single_positive_batch([0, 3, 3, 7])['data_samples']

    expected = spml.loss(feats, samples)['loss'].detach()
    assert float(stock.loss(feats, samples)['loss'].detach()) == \
        pytest.approx(float(expected), rel=1e-6)


@pytest.mark.parametrize('loss,bank', [
    (dict(type='LLLoss', scheme='LL-Cp', rate=0.05), 'CorrectedLabelBank'),
    (dict(type='ROLELoss', expected_positives=2.), 'LabelEstimateTable'),
])
def test_per_sample_losses_name_the_spml_head(loss, bank):
    model = build('MultiLabelLinearClsHead', loss)
    model.train()
    optim_wrapper = build_optim_wrapper(
        model, dict(optimizer=dict(type='Adam', lr=1e-3)))
    with pytest.raises(ValueError, match="use head type='SPMLLinearClsHead' "
                       rf"with label_bank=dict\(type='{bank}'"):
        model.train_step(single_positive_batch([1, 2]), optim_wrapper)


def test_stateful_loss_names_the_spml_head():
    model = build('MultiLabelLinearClsHead',
                  dict(type='OPMLLoss', soft_labels=True, rank_weight=0.01))
    model.train()
    optim_wrapper = build_optim_wrapper(
        model, dict(optimizer=dict(type='Adam', lr=1e-3)))
    with pytest.raises(ValueError, match="use head type='SPMLLinearClsHead' "
                       r"with label_bank=dict\(type='OPMLLabelBank'\)"):
        model.train_step(single_positive_batch([1, 2]), optim_wrapper)

