"""configs/_base_/runtime_gpu_fast.py as a second base of any config, each
switch of SPMLGPUFastRunner on its own, and a CPU run of the recipe."""
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim.optimizer import amp_optimizer_wrapper

import spml_mm  # noqa: F401
from spml_mm.engine import GPU_FAST_DEFAULTS, SPMLGPUFastRunner, apply_gpu_fast
from tests.conftest import REPO


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
