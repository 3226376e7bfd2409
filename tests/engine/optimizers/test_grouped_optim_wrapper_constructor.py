"""GroupedOptimWrapperConstructor: the configs' optimizer in a group per set
of options, with the update a group per parameter gives."""
import copy
import os.path as osp

import pytest
import torch
import torch.nn as nn
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS

from spml_mm.engine.optimizers.grouped_optim_wrapper_constructor import \
    merge_param_groups
from tests.conftest import PYTHON, REPO, run_tool
from tests.tools.test_train_test import CONFIG, tiny_options
from benchmark.gpu_steps import synthetic_batch

TINY_BACKBONE = dict(type='ResNet', depth=18, stem_channels=8,
                     base_channels=8, out_indices=(3, ))


def gr_config(tiny: bool = False) -> Config:
    cfg = Config.fromfile(
        osp.join(REPO, 'configs', 'grloss', 'resnet50_coco.py'))
    if tiny:
        cfg.model.backbone = TINY_BACKBONE
        cfg.model.head.in_channels = 64
    return cfg


def options(wrapper) -> dict:
    """Parameter (by id) -> the options of its group."""
    return {
        id(p): {k: v for k, v in group.items() if k != 'params'}
        for group in wrapper.optimizer.param_groups for p in group['params']
    }


def test_merge_param_groups_keeps_first_places_and_order():
    a, b, c, d = (nn.Parameter(torch.zeros(1)) for _ in range(4))
    merged = merge_param_groups([
        dict(params=[a]), dict(params=[b], lr=2.), dict(params=[c]),
        dict(params=[d], lr=2.)
    ])
    assert [[id(p) for p in g['params']] for g in merged] == [
        [id(a), id(c)], [id(b), id(d)]]
    assert [{k: v for k, v in g.items() if k != 'params'}
            for g in merged] == [{}, dict(lr=2.)]


def test_gr_config_has_a_group_per_learning_rate():
    # the ResNet-50 GR config as tools/train.py builds its optimizer: the
    # backbone at 1e-5, the head at 10x; MMEngine's default constructor
    # would make 161 groups with the same options per parameter
    init_default_scope('mmpretrain')
    cfg = gr_config()
    model = MODELS.build(cfg.model)
    wrapper = build_optim_wrapper(model, copy.deepcopy(cfg.optim_wrapper))
    groups = wrapper.optimizer.param_groups
    names = {id(p): n for n, p in model.named_parameters()}
    assert [len(g['params']) for g in groups] == [159, 2]
    assert cfg.optim_wrapper.constructor == 'GroupedOptimWrapperConstructor'
    assert [g['lr'] for g in groups] == [1e-5, pytest.approx(1e-4)]
    assert [names[id(p)] for p in groups[1]['params']] == [
        'head.fc.weight', 'head.fc.bias']
    default = copy.deepcopy(cfg.optim_wrapper)
    default.pop('constructor')
    per_parameter = build_optim_wrapper(model, default)
    assert len(per_parameter.optimizer.param_groups) == 161
    assert options(wrapper) == options(per_parameter)


@pytest.mark.parametrize('foreach', [False, True])
def test_same_update_as_a_group_per_parameter(foreach):
    # three GR steps of the tiny model, its optimizer from each constructor:
    # the same weights to the bit (foreach: the update PyTorch runs on CUDA)
    init_default_scope('mmpretrain')
    cfg = gr_config(tiny=True)
    cfg.optim_wrapper.optimizer.foreach = foreach
    torch.manual_seed(0)
    grouped = MODELS.build(cfg.model)
    per_parameter = copy.deepcopy(grouped)
    initial = copy.deepcopy(grouped.state_dict())
    default = copy.deepcopy(cfg.optim_wrapper)
    default.pop('constructor')
    data = synthetic_batch(4, 32, 80, 1)
    for model, optim in ((grouped, cfg.optim_wrapper),
                         (per_parameter, default)):
        wrapper = build_optim_wrapper(model, copy.deepcopy(optim))
        for _ in range(3):
            model.train_step(
                dict(data, data_samples=[
                    s.new() for s in data['data_samples']]), wrapper)
    for (name, a), b in zip(grouped.state_dict().items(),
                            per_parameter.state_dict().values()):
        assert torch.equal(a, b), name
    # and the steps moved the weights, the head's and the backbone's
    for name, before in initial.items():
        if name.endswith(('fc.weight', 'conv1.weight')):
            assert not torch.equal(grouped.state_dict()[name], before), name


@pytest.mark.slow
def test_resume_of_a_group_per_parameter_checkpoint(tiny_demo, tmp_path):
    """A run started under MMEngine's constructor (a group per parameter,
    as the GR configs had) and resumed under this one ends with the weights
    of the run that never stopped: the checkpoint's groups are merged, so
    every parameter keeps its Adam moments."""
    head_x10 = "paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)})"
    base = f'_base_ = {osp.join(REPO, CONFIG)!r}\n'
    old, new = tmp_path / 'old.py', tmp_path / 'new.py'
    old.write_text(base + "optim_wrapper = dict(constructor="
                   f"'DefaultOptimWrapperConstructor', {head_x10})\n")
    new.write_text(base + f'optim_wrapper = dict({head_x10})\n')

    def train(config, work, epochs, *extra):
        return run_tool([PYTHON, 'tools/train.py', str(config), '--work-dir',
                         str(work), '--no-validate', *extra] +
                        tiny_options(tiny_demo, epochs))

    train(old, tmp_path / 'whole', 2)
    train(old, tmp_path / 'resumed', 1)
    out = train(new, tmp_path / 'resumed', 2, '--resume')
    assert 'groups once its groups of equal options are merged' in out
    whole, resumed = (torch.load(tmp_path / run / 'epoch_2.pth',
                                 weights_only=True)
                      for run in ('whole', 'resumed'))
    assert len(resumed['optimizer']['param_groups']) == 2
    assert len(whole['optimizer']['param_groups']) > 2
    for name, value in whole['state_dict'].items():
        assert torch.equal(resumed['state_dict'][name], value), name
