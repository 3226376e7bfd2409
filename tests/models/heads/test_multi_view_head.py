"""Multi-view training through ImageClassifier and SPMLLinearClsHead."""
import pytest
import torch
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from spml_mm.models.losses import LASDLoss, ViewConsistency

LASD = dict(type='LASDLoss', lambda_pos=0.1, tau=0.6, lambda_neg=0.2)


def build_model(consistency):
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    return MODELS.build(
        dict(
            type='ImageClassifier',
            backbone=dict(type='LeNet5'),
            neck=dict(type='GlobalAveragePooling'),
            head=dict(
                type='SPMLLinearClsHead',
                num_classes=4,
                in_channels=120,
                loss=LASD,
                consistency=consistency),
            data_preprocessor=dict(
                type='MultiViewDataPreprocessor', mean=[0.], std=[1.])))


def multi_view_batch(num_samples=2, num_views=3):
    """A pseudo-collated batch: V lists of B images that require grad."""
    g = torch.Generator().manual_seed(1)
    views = [[
        torch.rand(1, 32, 32, generator=g).requires_grad_()
        for _ in range(num_samples)
    ] for _ in range(num_views)]
    samples = [DataSample().set_gt_label([i]) for i in range(num_samples)]
    return dict(inputs=views, data_samples=samples), views


def test_gradients_flow_into_every_view():
    model = build_model(dict(type='ViewConsistency', alpha=0.7))
    data, views = multi_view_batch()
    data = model.data_preprocessor(data, training=True)
    losses = model(**data, mode='loss')
    assert set(losses) == {'loss', 'loss_consistency'}
    sum(losses.values()).backward()
    for view in views:
        for image in view:
            assert image.grad is not None and image.grad.abs().sum() > 0


def test_supervised_loss_reads_the_first_view_only():
    model = build_model(None)
    data, views = multi_view_batch()
    data = model.data_preprocessor(data, training=True)
    losses = model(**data, mode='loss')
    assert set(losses) == {'loss'}
    losses['loss'].backward()
    assert all(image.grad.abs().sum() > 0 for image in views[0])
    assert all(image.grad is None or not image.grad.any()
               for view in views[1:] for image in view)


def test_losses_by_hand_from_the_view_logits():
    model = build_model(dict(type='ViewConsistency', alpha=0.7))
    data, _ = multi_view_batch(num_samples=3, num_views=2)
    data = model.data_preprocessor(data, training=True)
    with torch.no_grad():
        losses = model(**data, mode='loss')
        logits = model.head(model.extract_feat(data['inputs']))
    target = torch.eye(4)[:3]
    torch.testing.assert_close(
        losses['loss'],
        LASDLoss(0.1, 0.6, lambda_neg=0.2)(logits[:3], target))
    torch.testing.assert_close(
        losses['loss_consistency'],
        ViewConsistency(0.7)(torch.stack([logits[:3], logits[3:]])))


def test_prediction_stays_single_view():
    model = build_model(dict(type='ViewConsistency', alpha=0.7))
    images = [torch.rand(1, 32, 32) for _ in range(5)]
    data = model.data_preprocessor(dict(inputs=images), training=False)
    predictions = model(**data, mode='predict')
    assert len(predictions) == 5
    assert predictions[0].pred_score.shape == (4, )


def test_consistency_on_a_single_view_batch_is_an_error():
    model = build_model(dict(type='ViewConsistency', alpha=0.7))
    images = [torch.rand(1, 32, 32) for _ in range(2)]
    samples = [DataSample().set_gt_label([i]) for i in range(2)]
    data = model.data_preprocessor(
        dict(inputs=images, data_samples=samples), training=True)
    with pytest.raises(ValueError, match='at least 2 views'):
        model(**data, mode='loss')
