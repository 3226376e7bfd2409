"""configs/_base_/runtime_gpu_fast.py as a second base of any config, each
switch of SPMLGPUFastRunner on its own, the runner found the way the tools
build it, its refusal without CUDA, and a CPU run of the recipe."""
import os.path as osp
import re
import subprocess

import pytest
import torch
from mmengine.config import Config
from mmengine.optim.optimizer import amp_optimizer_wrapper
from mmengine.registry import RUNNERS, DefaultScope

import spml_mm  # noqa: F401
from spml_mm.engine import GPU_FAST_DEFAULTS, SPMLGPUFastRunner, apply_gpu_fast
from spml_mm.engine.runner import gpu_fast_runner
from tests.conftest import PYTHON, REPO


def fast_config(tmp_path, recipe, **switches):
    path = tmp_path / 'fast.py'
    path.write_text(
        f"_base_ = ['{osp.join(REPO, recipe)}', "
        f"'{osp.join(REPO, 'configs/_base_/runtime_gpu_fast.py')}']\n"
        f'gpu_fast = {switches!r}\n')
    return Config.fromfile(str(path))


@pytest.mark.parametrize('recipe', ['configs/an/resnet50_voc.py',
                                    'configs/lasd/resnet50_coco.py'])
def test_every_switch_alone(tmp_path, recipe):
    stock = Config.fromfile(osp.join(REPO, recipe))
    base = fast_config(tmp_path, recipe)
    assert base.runner_type == 'SPMLGPUFastRunner'
    off = dict.fromkeys(GPU_FAST_DEFAULTS, False)
    plain = apply_gpu_fast(fast_config(tmp_path, recipe, **off))
    for key in ('optim_wrapper', 'data_preprocessor', 'env_cfg',
                'train_dataloader'):
        assert plain[key] == stock[key], key
    assert 'compile' not in plain
    full = apply_gpu_fast(base)
    kind = stock.data_preprocessor.get('type', 'SPMLDataPreprocessor')
    assert full.data_preprocessor.type == kind
    assert full.data_preprocessor.channels_last
    assert full.env_cfg.cudnn_benchmark and full.env_cfg.dist_cfg
    assert full.optim_wrapper.type == 'AmpOptimWrapper'
    assert full.optim_wrapper.dtype == 'bfloat16'
    assert full.optim_wrapper.optimizer == stock.optim_wrapper.optimizer
    loader = full.train_dataloader
    assert (loader.num_workers, loader.prefetch_factor,
            loader.pin_memory) == (8, 4, True)
    assert loader.collate_fn == dict(type='default_collate')
    assert loader.dataset == stock.train_dataloader.dataset
    one = apply_gpu_fast(fast_config(tmp_path, recipe, **dict(
        off, cudnn_benchmark=True)))
    assert one.env_cfg == dict(stock.env_cfg, cudnn_benchmark=True)
    assert one.optim_wrapper == stock.optim_wrapper
    with pytest.raises(ValueError, match='unknown switches'):
        apply_gpu_fast(fast_config(tmp_path, recipe, fast=True))


def test_fast_recipe_trains_on_cpu(tmp_path, tiny_demo, monkeypatch):
    """The whole recipe but the workers, through the runner, in bf16 on
    the CPU (AmpOptimWrapper's GPU check lifted, as in test_amp.py)."""
    monkeypatch.setattr(amp_optimizer_wrapper, 'is_cuda_available',
                        lambda: True)
    monkeypatch.setattr(gpu_fast_runner, 'is_cuda_available', lambda: True)
    cfg = fast_config(tmp_path, 'configs/an/an_vgg11bn_demo.py',
                      num_workers=0)
    cfg.merge_from_dict({
        'work_dir': str(tmp_path / 'work'),
        'train_cfg.max_epochs': 1,
        'train_dataloader.dataset.data_root': tiny_demo,
        'train_dataloader.dataset.indices': 64,
        'val_cfg': None, 'val_dataloader': None, 'val_evaluator': None,
        'default_hooks.checkpoint.save_best': None,
    })
    runner = SPMLGPUFastRunner.from_cfg(cfg)
    model = runner.model
    assert type(model.data_preprocessor).__name__ == 'SPMLDataPreprocessor'
    conv = next(m for m in model.modules()
                if isinstance(m, torch.nn.Conv2d))
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert not conv.weight.is_contiguous()
    runner.train()
    assert runner.optim_wrapper.cast_dtype == torch.bfloat16
    assert not runner.optim_wrapper.loss_scaler.is_enabled()
    loss = runner.message_hub.get_scalar('train/loss').current()
    assert loss == loss and loss > 0


@pytest.mark.parametrize('scope', [None, 'mmpretrain', 'spml_mm'])
def test_tools_registry_finds_the_runner(scope):
    """tools/train.py, tools/test.py and MMPretrain's tools/train.py build
    ``runner_type`` with MMEngine's root RUNNERS, under no default scope
    (before the runner exists) or the config's."""
    instance = f'test_runner_scope_{scope}'
    if scope is None:
        assert RUNNERS.get('SPMLGPUFastRunner') is SPMLGPUFastRunner
        return
    with DefaultScope.overwrite_default_scope(scope):
        DefaultScope.get_instance(instance, scope_name=scope)
        with RUNNERS.switch_scope_and_registry(None) as registry:
            assert registry.get('SPMLGPUFastRunner') is SPMLGPUFastRunner


def test_refused_without_cuda(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_fast_runner, 'is_cuda_available', lambda: False)
    cfg = fast_config(tmp_path, 'configs/an/resnet50_voc.py', amp=None)
    with pytest.raises(RuntimeError) as err:
        SPMLGPUFastRunner.from_cfg(cfg)
    assert ("runner_type='SPMLGPUFastRunner' is the GPU fast recipe "
            '(configs/_base_/runtime_gpu_fast.py: gpu_fast.amp=None, ') \
        in str(err.value)
    assert '--cfg-options runner_type=Runner' in str(err.value)


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason='needs a CPU machine')
def test_train_tool_refuses_the_recipe_on_cpu(tmp_path, tiny_demo):
    """The report's config through tools/train.py: found, then refused
    before any work, naming the keys; the advised option trains."""
    config = tmp_path / 'fast.py'
    config.write_text("_base_ = ['spml_mm::an/an_vgg11bn_demo.py', "
                      "'spml_mm::_base_/runtime_gpu_fast.py']\n")
    work = tmp_path / 'work'
    options = ['--cfg-options', 'train_cfg.max_epochs=1',
               'train_dataloader.dataset.indices=32'] + [
        f'{split}_dataloader.dataset.data_root={tiny_demo}'
        for split in ('train', 'val', 'test')]
    command = [PYTHON, 'tools/train.py', str(config), '--work-dir',
               str(work)] + options
    env = dict(__import__('os').environ, PYTHONPATH=REPO)
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert 'not in the runner registry' not in out
    assert ("RuntimeError: runner_type='SPMLGPUFastRunner' is the GPU fast "
            "recipe (configs/_base_/runtime_gpu_fast.py: "
            "gpu_fast.amp='bfloat16'") in out
    assert 'Epoch(train)' not in out and 'SPMLDataset' not in out
    assert not list(work.glob('*.pth'))
    proc = subprocess.run(command + ['runner_type=Runner'], cwd=REPO,
                          capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r'Epoch\(train\) \[1\]', proc.stdout + proc.stderr)
    assert (work / 'epoch_1.pth').is_file()


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason='needs a CPU machine')
def test_machine_is_checked_before_the_pretrained_weights(tmp_path):
    """The recipe on ResNet-50 without its ImageNet weights here: the
    missing GPU is named first, not the weights a CPU run would not use."""
    config = tmp_path / 'fast.py'
    config.write_text("_base_ = ['spml_mm::an/resnet50_voc.py', "
                      "'spml_mm::_base_/runtime_gpu_fast.py']\n")
    proc = subprocess.run(
        [PYTHON, 'tools/train.py', str(config), '--work-dir',
         str(tmp_path / 'work'), '--cfg-options',
         f'model.backbone.init_cfg.checkpoint={tmp_path}/missing.pth'],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(__import__('os').environ, PYTHONPATH=REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "runner_type='SPMLGPUFastRunner' is the GPU fast recipe" in out
    assert 'missing.pth' not in out


def test_image_cache_and_device_flip_switches(tmp_path):
    """image_cache: every loader reads the cache in place of the steps it
    holds; device_flip: the training pipeline's RandomFlip becomes the
    preprocessor's flip_prob. Off by default."""
    recipe = 'configs/an/resnet50_voc.py'
    stock = Config.fromfile(osp.join(REPO, recipe))
    assert apply_gpu_fast(fast_config(tmp_path, recipe)).train_dataloader \
        .dataset.pipeline == stock.train_dataloader.dataset.pipeline
    cfg = apply_gpu_fast(fast_config(tmp_path, recipe, image_cache='c.npy',
                                     device_flip=True))
    load, resize, flip, pack = stock.train_dataloader.dataset.pipeline
    assert flip == dict(type='RandomFlip', prob=0.5, direction='horizontal')
    cache = dict(type='LoadCachedImage', cache_file='c.npy',
                 steps=[load, resize])
    assert cfg.train_dataloader.dataset.pipeline == [cache, pack]
    assert cfg.data_preprocessor.flip_prob == 0.5
    for loader in ('val_dataloader', 'test_dataloader'):
        assert cfg[loader].dataset.pipeline == [cache] + \
            stock[loader].dataset.pipeline[2:]


@pytest.mark.parametrize('recipe,message', [
    ('configs/an/an_vgg11bn_demo.py',
     'onto the device; train_dataloader.dataset.pipeline has 0'),
    ('configs/lasd/resnet50_coco.py',
     'into SPMLDataPreprocessor, not MultiViewDataPreprocessor'),
])
def test_device_flip_refuses_what_it_cannot_move(tmp_path, recipe, message):
    with pytest.raises(ValueError, match=message):
        apply_gpu_fast(fast_config(tmp_path, recipe, device_flip=True))


def test_device_flip_refuses_a_random_step_after_the_flip(tmp_path):
    cfg = fast_config(tmp_path, 'configs/an/resnet50_voc.py',
                      device_flip=True)
    cfg.train_dataloader.dataset.pipeline.insert(
        3, dict(type='RandomErasing'))
    with pytest.raises(ValueError, match=r"followed by \['RandomErasing', "
                       r"'PackInputs'\]: set gpu_fast.device_flip=False"):
        apply_gpu_fast(cfg)


def test_cached_images_flipped_on_the_device_train_on_cpu(
        tmp_path, tiny_demo, monkeypatch):
    """The two switches through the runner on the demo with a RandomFlip
    (its cache written as tools/cache_images.py writes it): the loader
    gives the cached images unflipped, the model sees them mirrored about
    half the time."""
    from mmengine.registry import init_default_scope

    from spml_mm.datasets.image_cache import (build_image_cache,
                                              cached_steps,
                                              config_image_paths)
    monkeypatch.setattr(amp_optimizer_wrapper, 'is_cuda_available',
                        lambda: True)
    monkeypatch.setattr(gpu_fast_runner, 'is_cuda_available', lambda: True)
    cfg = fast_config(tmp_path, 'configs/an/an_vgg11bn_demo.py',
                      num_workers=0, device_flip=True)
    cfg.merge_from_dict({
        f'{split}_dataloader.dataset.data_root': tiny_demo
        for split in ('train', 'val', 'test')})
    cfg.train_dataloader.dataset.pipeline.insert(
        1, dict(type='RandomFlip', prob=0.5, direction='horizontal'))
    init_default_scope('mmpretrain')
    cache = build_image_cache(
        config_image_paths(cfg),
        cached_steps(cfg.train_dataloader.dataset.pipeline),
        str(tmp_path / 'cache.npy'), progress=False)
    cfg.merge_from_dict({
        'gpu_fast.image_cache': cache,
        'work_dir': str(tmp_path / 'work'),
        'train_cfg.max_epochs': 1,
        'train_dataloader.dataset.indices': 64,
        'val_cfg': None, 'val_dataloader': None, 'val_evaluator': None,
        'default_hooks.checkpoint.save_best': None,
    })
    runner = SPMLGPUFastRunner.from_cfg(cfg)
    assert runner.model.data_preprocessor.flip_prob == 0.5
    seen = []
    hook = runner.model.data_preprocessor.register_forward_hook(
        lambda module, args, out: seen.append(
            (args[0]['inputs'], out['inputs'])))
    runner.train()
    hook.remove()
    assert [type(t).__name__ for t in
            runner.train_dataloader.dataset.pipeline.transforms] == [
                'LoadCachedImage', 'PackInputs']
    mirrored = 0
    for raw, out in seen:
        expect = runner.model.data_preprocessor(dict(inputs=raw), False)
        same = (out == expect['inputs']).flatten(1).all(1)
        flip = (out == expect['inputs'].flip(-1)).flatten(1).all(1)
        assert bool((same | flip).all())
        mirrored += int((flip & ~same).sum())
    assert 0 < mirrored < 64
