import numpy as np
import pytest
import torch
from mmengine.dataset import default_collate, pseudo_collate
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS, TRANSFORMS

from spml_mm.models.data_preprocessors import (MultiViewDataPreprocessor,
                                               is_multi_view, split_views)


def multi_view_samples(num_samples=3, num_views=3):
    """Samples as MultiView + PackInputs produce them (view v = 10 v + i)."""
    init_default_scope('mmpretrain')
    pack = TRANSFORMS.build(dict(type='PackInputs'))
    samples = []
    for i in range(num_samples):
        views = [
            np.full((4, 5, 3), 10 * v + i, dtype=np.uint8)
            for v in range(num_views)
        ]
        samples.append(pack(dict(img=views, gt_label=np.array([i]))))
    return samples


@pytest.mark.parametrize('collate', [pseudo_collate, default_collate])
def test_views_are_stacked_view_major(collate):
    preprocessor = MultiViewDataPreprocessor(mean=[1., 1., 1.],
                                             std=[2., 2., 2.])
    data = collate(multi_view_samples())
    assert is_multi_view(data['inputs'])
    out = preprocessor(data, training=True)
    assert out['inputs'].shape == (9, 3, 4, 5)
    assert len(out['data_samples']) == 3
    pixel = out['inputs'][:, 0, 0, 0] * 2 + 1  # undo the normalisation
    torch.testing.assert_close(
        pixel, torch.tensor([0., 1, 2, 10, 11, 12, 20, 21, 22]))
    # split_views inverts the stacking: view v, sample i
    views = split_views(pixel[:, None], 3)
    torch.testing.assert_close(views[2, 1], torch.tensor([21.]))


@pytest.mark.parametrize('collate', [pseudo_collate, default_collate])
def test_single_view_batches_unchanged(collate):
    init_default_scope('mmpretrain')
    pack = TRANSFORMS.build(dict(type='PackInputs'))
    samples = [
        pack(dict(img=np.full((4, 5, 3), i, np.uint8), gt_label=np.array([i])))
        for i in range(3)
    ]
    kwargs = dict(mean=[1., 2., 3.], std=[2., 2., 2.], to_rgb=True)
    data = collate(samples)
    assert not is_multi_view(data['inputs'])
    ours = MultiViewDataPreprocessor(**kwargs)(collate(samples))
    stock = MODELS.build(dict(type='ClsDataPreprocessor', **kwargs))(
        collate(samples))
    torch.testing.assert_close(ours['inputs'], stock['inputs'])


def test_split_views_rejects_uneven_batches():
    with pytest.raises(ValueError, match='same number of views'):
        split_views(torch.zeros(7, 2), 3)


def test_batch_augments_refused():
    with pytest.raises(ValueError, match='batch_augments'):
        MultiViewDataPreprocessor(
            num_classes=3,
            batch_augments=dict(augments=dict(type='Mixup', alpha=1.)))
    # ImageClassifier passes its train_cfg (None) as batch_augments
    model = MODELS.build(
        dict(type='ImageClassifier',
             backbone=dict(type='LeNet5'),
             data_preprocessor=dict(type='MultiViewDataPreprocessor')))
    assert isinstance(model.data_preprocessor, MultiViewDataPreprocessor)
