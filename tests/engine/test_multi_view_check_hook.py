from types import SimpleNamespace

import pytest
import torch
from mmengine.registry import init_default_scope
from mmpretrain.registry import HOOKS, MODELS


def fake_runner(num_views, consistency, preprocessor):
    init_default_scope('mmpretrain')
    model = MODELS.build(
        dict(
            type='ImageClassifier',
            backbone=dict(type='LeNet5'),
            neck=dict(type='GlobalAveragePooling'),
            head=dict(
                type='SPMLLinearClsHead',
                num_classes=4,
                in_channels=120,
                consistency=consistency),
            data_preprocessor=dict(type=preprocessor)))
    image = torch.zeros(1, 32, 32)
    inputs = [image] * num_views if num_views > 1 else image
    loader = SimpleNamespace(dataset=[dict(inputs=inputs)])
    return SimpleNamespace(model=model, train_dataloader=loader)


CONSISTENCY = dict(type='ViewConsistency', alpha=0.5)


@pytest.mark.parametrize('num_views,consistency,preprocessor', [
    (3, CONSISTENCY, 'MultiViewDataPreprocessor'),
    (2, None, 'MultiViewDataPreprocessor'),
    (1, None, 'MultiViewDataPreprocessor'),
    (1, None, 'ClsDataPreprocessor'),
])
def test_consistent_setups_pass(num_views, consistency, preprocessor):
    hook = HOOKS.build(dict(type='MultiViewCheckHook'))
    hook.before_train(fake_runner(num_views, consistency, preprocessor))


def test_consistency_with_one_view_fails():
    hook = HOOKS.build(dict(type='MultiViewCheckHook'))
    runner = fake_runner(1, CONSISTENCY, 'MultiViewDataPreprocessor')
    with pytest.raises(ValueError, match='at least 2 views .* yields 1'):
        hook.before_train(runner)


def test_views_without_multi_view_preprocessor_fail():
    hook = HOOKS.build(dict(type='MultiViewCheckHook'))
    runner = fake_runner(3, CONSISTENCY, 'ClsDataPreprocessor')
    with pytest.raises(ValueError, match='MultiViewDataPreprocessor'):
        hook.before_train(runner)
