"""LoadCachedFeatures and PrecomputedFeatures: the linear regime's cache."""
import numpy as np
import pytest
import torch

from spml_mm.datasets import LoadCachedFeatures
from spml_mm.models.backbones import PrecomputedFeatures


@pytest.fixture
def cache(tmp_path):
    path = str(tmp_path / 'features.npz')
    features = np.arange(12, dtype=np.float16).reshape(3, 4)
    np.savez(path, images=np.array(['d/images/a.jpg', 'd/images/b.jpg',
                                    'd/images/c.jpg']),
             features=features, features_flipped=-features)
    return path


def test_loads_the_row_of_the_image_path(cache):
    out = LoadCachedFeatures(cache)(dict(img_path='d/./images/b.jpg'))
    assert out['img'].shape == (4, 1, 1) and out['img'].dtype == torch.float32
    assert out['img'].flatten().tolist() == [4., 5., 6., 7.]
    assert out['flip'] is False


def test_flip_prob_takes_the_mirror_images_features(cache):
    np.random.seed(0)
    always = LoadCachedFeatures(cache, flip_prob=1.)
    assert always(dict(img_path='d/images/c.jpg'))['img'].flatten().tolist() \
        == [-8., -9., -10., -11.]
    half = LoadCachedFeatures(cache, flip_prob=0.5)
    flips = [half(dict(img_path='d/images/a.jpg'))['flip'] for _ in range(400)]
    assert 150 < sum(flips) < 250


def test_an_image_missing_from_the_cache_names_it_and_the_fix(cache):
    with pytest.raises(KeyError, match='d/images/x.jpg is not in the feature '
                       'cache .* tools/cache_features.py'):
        LoadCachedFeatures(cache)(dict(img_path='d/images/x.jpg'))
    with pytest.raises(FileNotFoundError, match='write it with'):
        LoadCachedFeatures(cache + '.missing')(dict(img_path='a'))
    with pytest.raises(ValueError, match='flip_prob'):
        LoadCachedFeatures(cache, flip_prob=1.5)


def test_precomputed_features_pass_through_and_refuse_other_shapes():
    backbone = PrecomputedFeatures(feature_dim=4)
    x = torch.randn(2, 4, 1, 1)
    (out, ) = backbone(x)
    assert out is x and not list(backbone.parameters())
    with pytest.raises(ValueError,
                       match=r'\(B, 4, 1, 1\), got \(2, 3, 8, 8\)'):
        backbone(torch.randn(2, 3, 8, 8))


@pytest.mark.slow
def test_cache_tool_reads_the_data_root_given_as_cfg_options(tmp_path):
    """tools/cache_features.py on a proxy outside the config's data_root
    (how accuracy.py caches a reduced proxy): one row per image of the
    three splits, each image's features and its mirror image's."""
    import os.path as osp

    from spml_mm.benchmarks.proxy import make_proxy_dataset
    from tests.conftest import PYTHON, run_tool
    root = str(tmp_path / 'proxy')
    make_proxy_dataset(root, 'voc', image_size=32, seed=0,
                       sizes=dict(train=10, val=6))
    out = str(tmp_path / 'features.npz')
    run_tool([
        PYTHON, 'tools/cache_features.py',
        'configs/an/efficientnet-lite0_proxy-voc.py', '--out', out,
        '--batch-size', '4', '--threads', '1', '--cfg-options',
        'model.backbone.init_cfg=None',  # random weights: no checkpoint
        *[f'{loader}.dataset.data_root={root}'
          for loader in ('train_dataloader', 'val_dataloader',
                         'test_dataloader')]
    ])
    cache = np.load(out)
    images = list(cache['images'])
    # the protocol's train and val rows of the 10 training images, then
    # the 6 test images, each once
    assert len(images) == len(set(images)) == 16
    assert all(path.startswith(osp.join(root, 'images')) for path in images)
    assert sum('/val/' in path for path in images) == 6
    assert cache['features'].shape == cache['features_flipped'].shape == (
        16, 1280)
    assert not np.array_equal(cache['features'], cache['features_flipped'])
