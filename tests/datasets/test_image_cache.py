"""The image cache (``tools/cache_images.py``, ``LoadCachedImage``): the
loaders of a config yield the same batches with the cache as without it
(training with its random flip or LASD's random crops, evaluation, a
``Resize`` held in the cache, a loader worker), and a cache that does not
fit the data is refused."""
import copy
import os
import os.path as osp
import re
import subprocess

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import Runner, set_random_seed

import spml_mm  # noqa: F401
from spml_mm.benchmarks.proxy import make_proxy_dataset
from spml_mm.datasets.image_cache import (LOADERS, LoadCachedImage,
                                          build_image_cache, cache_options,
                                          cached_steps, config_image_paths,
                                          default_cache_file)
from tests.conftest import PYTHON, REPO

AN = osp.join(REPO, 'configs/an/efficientnet-lite0_proxy-voc.py')
LASD = osp.join(REPO, 'configs/lasd/efficientnet-lite0_proxy-voc.py')


@pytest.fixture(scope='module')
def proxy(tmp_path_factory):
    """A VOC-like proxy of 40 + 40 images (128 px JPEG files)."""
    root = str(tmp_path_factory.mktemp('proxy'))
    make_proxy_dataset(root, 'voc', sizes=dict(train=40, val=40), seed=0)
    return root


def config(path, root, **loader):
    cfg = Config.fromfile(path)
    for name in LOADERS:
        cfg[name].dataset.data_root = root
        cfg[name].update(loader)
    return cfg


def cache_of(cfg, out):
    init_default_scope('mmpretrain')
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    return build_image_cache(config_image_paths(cfg), steps, out,
                             progress=False)


def cached(cfg, cache_file):
    """The config with --cfg-options as tools/cache_images.py prints
    them."""
    cfg = copy.deepcopy(cfg)
    cfg.merge_from_dict(dict(o.split('=', 1)
                             for o in cache_options(cache_file)))
    return cfg


def batches(cfg, loader, epochs=1):
    init_default_scope('mmpretrain')
    set_random_seed(0)  # as the runner seeds every process at its start
    built = Runner.build_dataloader(copy.deepcopy(cfg[loader]), seed=0)
    out = []
    for epoch in range(epochs):
        if hasattr(built.sampler, 'set_epoch'):
            built.sampler.set_epoch(epoch)
        out += list(built)
    return out


def tensors(inputs):
    """The images of a batch's inputs (one or several views), in order."""
    if isinstance(inputs, torch.Tensor):
        return [inputs]
    return [t for item in inputs for t in tensors(item)]


def assert_same(stock, fast):
    assert len(stock) == len(fast) > 0
    for a, b in zip(stock, fast):
        xs, ys = tensors(a['inputs']), tensors(b['inputs'])
        assert len(xs) == len(ys) > 0
        for x, y in zip(xs, ys):
            assert x.dtype == y.dtype == torch.uint8
            assert torch.equal(x, y)
        for s, t in zip(a['data_samples'], b['data_samples'], strict=True):
            assert s.metainfo.keys() == t.metainfo.keys()
            for key in s.metainfo:
                assert np.all(s.metainfo[key] == t.metainfo[key]), key
            assert torch.equal(s.gt_label, t.gt_label)


@pytest.mark.parametrize('path', [AN, LASD], ids=['flip', 'lasd-views'])
def test_same_batches_as_decoding_files(proxy, tmp_path, path):
    cfg = config(path, proxy)
    cache = cache_of(cfg, str(tmp_path / 'c.npy'))
    fast = cached(cfg, cache)
    assert fast.train_dataloader.dataset.pipeline[0] == dict(
        type='LoadCachedImage', cache_file=cache)
    stock_train = batches(cfg, 'train_dataloader', epochs=2)
    assert_same(stock_train, batches(fast, 'train_dataloader', epochs=2))
    assert_same(batches(cfg, 'test_dataloader'),
                batches(fast, 'test_dataloader'))
    if path == AN:  # the random flip acted both ways: not a vacuous test
        flips = [s.flip for b in stock_train for s in b['data_samples']]
        assert 0 < sum(flips) < len(flips)


def test_same_batches_with_a_worker_and_a_cached_resize(proxy, tmp_path):
    cfg = config(AN, proxy, num_workers=1, persistent_workers=False)
    resize = dict(type='Resize', scale=(64, 64))
    for name in LOADERS:
        cfg[name].dataset.pipeline.insert(1, resize)
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    assert steps == [dict(type='LoadImageFromFile'), resize]
    cache = cache_of(cfg, str(tmp_path / 'c.npy'))
    fast = copy.deepcopy(cfg)
    for name in LOADERS:
        pipeline = fast[name].dataset.pipeline
        pipeline[:2] = [dict(type='LoadCachedImage', cache_file=cache,
                             steps=steps)]
    stock = batches(cfg, 'train_dataloader')
    assert stock[0]['inputs'][0].shape == (3, 64, 64)
    assert 'scale_factor' in stock[0]['data_samples'][0]
    assert_same(stock, batches(fast, 'train_dataloader'))


def test_refuses_a_cache_that_does_not_fit(proxy, tmp_path):
    cfg = config(AN, proxy)
    init_default_scope('mmpretrain')
    paths = config_image_paths(cfg)
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    # the default file is keyed by the image list and the steps
    key = default_cache_file(paths, steps, proxy)
    assert key.startswith(osp.join(proxy, 'image_cache', ''))
    assert default_cache_file(paths[1:], steps, proxy) != key
    assert default_cache_file(paths, steps + [dict(type='Resize', scale=64)],
                              proxy) != key
    cache = build_image_cache(paths[1:], steps, str(tmp_path / 'c.npy'),
                              progress=False)
    load = LoadCachedImage(cache)
    result = load(dict(img_path=paths[1]))
    assert result['img'].flags.writeable and result['img'].shape == (128,
                                                                     128, 3)
    with pytest.raises(KeyError, match=re.escape(
            f'{paths[0]} is not in the image cache {cache}; write the cache '
            'again with python tools/cache_images.py CONFIG --out')):
        load(dict(img_path=paths[0]))
    with pytest.raises(ValueError, match='holds the steps'):
        LoadCachedImage(cache, steps=steps + [dict(type='Resize',
                                                   scale=64)])(
            dict(img_path=paths[1]))
    # a file written again after the cache: stale
    stat = os.stat(paths[1])
    os.utime(paths[1], ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    try:
        with pytest.raises(ValueError, match=re.escape(
                f'image cache {cache} is stale: {paths[1]} changed since '
                'it was written')):
            load(dict(img_path=paths[1]))
    finally:
        os.utime(paths[1], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(FileNotFoundError, match='tools/cache_images.py'):
        LoadCachedImage(str(tmp_path / 'none.npy'))(dict(img_path=paths[1]))


def test_refuses_images_of_several_shapes(tmp_path):
    import cv2
    for i, side in enumerate((8, 9)):
        cv2.imwrite(str(tmp_path / f'{i}.png'),
                    np.zeros((side, side, 3), np.uint8))
    with pytest.raises(ValueError, match='add a Resize after '
                       'LoadImageFromFile'):
        build_image_cache([str(tmp_path / '0.png'), str(tmp_path / '1.png')],
                          [dict(type='LoadImageFromFile')],
                          str(tmp_path / 'c.npy'), progress=False)
    assert not (tmp_path / 'c.json').exists()


@pytest.mark.slow
def test_cache_images_tool(proxy, tmp_path):
    options = [f'{name}.dataset.data_root={proxy}' for name in LOADERS]
    proc = subprocess.run(
        [PYTHON, 'tools/cache_images.py', AN, '--cfg-options', *options],
        cwd=REPO, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=REPO))
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'80 images in \d+ s to (\S+)\n', proc.stdout)
    assert found and found.group(1).startswith(
        osp.join(proxy, 'image_cache', ''))
    assert ('use it with --cfg-options ' + ' '.join(
        cache_options(found.group(1)))) in proc.stdout
    assert ('with the GPU fast recipe: --cfg-options gpu_fast.image_cache='
            f'{found.group(1)}\n') in proc.stdout
