import glob
import json
import os.path as osp
from types import SimpleNamespace

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn
from mmengine.logging import MessageHub
from mmengine.model import MMDistributedDataParallel
from mmpretrain.registry import MODELS

from spml_mm.engine.hooks import SPMLEpochHook
from spml_mm.models.epoch_scheduled import EpochScheduled, schedule_at
from tests.conftest import PYTHON, run_tool


class TinyClassifier(nn.Module):

    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.head = MODELS.build(
            dict(
                type='SPMLLinearClsHead',
                num_classes=3,
                in_channels=8,
                loss=dict(type='GRLoss', w=(0., 10.), b=(-2., -8.))))

    def forward(self, x):
        return self.head.fc(self.backbone(x))


def test_hook_reaches_loss_inside_ddp(tmp_path):
    dist.init_process_group(
        'gloo',
        init_method=f'file://{tmp_path / "store"}',
        rank=0,
        world_size=1)
    try:
        model = MMDistributedDataParallel(module=TinyClassifier())
        hub = MessageHub.get_instance('test_epoch_hook')
        runner = SimpleNamespace(
            model=model, epoch=4, max_epochs=8, message_hub=hub)
        SPMLEpochHook().before_train_epoch(runner)
    finally:
        dist.destroy_process_group()
    loss = model.module.head.loss_module
    # epoch 4 of 8 (0-based): beta at 4/8, alpha at 5/8
    assert loss.k_now == pytest.approx(dict(w=5., b=-5.))
    assert loss.v_now == pytest.approx(dict(mu=0.6875, sigma=1.0625))
    for name, value in dict(w=5., b=-5., mu=0.6875, sigma=1.0625).items():
        assert hub.get_scalar(f'train/{name}').current() == pytest.approx(
            value)


def test_hook_selects_the_epoch_scheduled_by_type():
    """A module is moved because it is an EpochScheduled, not because it
    happens to have a method of that name (a sampler's, a wrapper's)."""

    class Scheduled(nn.Module, EpochScheduled):

        def set_epoch(self, epoch, max_epochs):
            self.at = schedule_at((1., 3.), epoch / max_epochs)
            return dict(at=self.at)

    class Lookalike(nn.Module):

        def set_epoch(self, epoch, max_epochs):
            raise AssertionError('not an EpochScheduled')

    model = nn.Sequential(Scheduled(), Lookalike())
    hub = MessageHub.get_instance('test_epoch_hook_by_type')
    SPMLEpochHook().before_train_epoch(
        SimpleNamespace(model=model, epoch=1, max_epochs=4, message_hub=hub))
    assert model[0].at == 1.5
    assert hub.get_scalar('train/at').current() == 1.5
    with pytest.raises(TypeError, match='abstract'):
        type('Unfinished', (nn.Module, EpochScheduled), {})()


@pytest.mark.slow
def test_demo_training_logs_changing_parameters(tiny_demo, tmp_path):
    work = str(tmp_path / 'run')
    run_tool([
        PYTHON, 'tools/train.py', 'configs/grloss/grloss_vgg11bn_demo.py',
        '--work-dir', work, '--cfg-options', 'train_cfg.max_epochs=2',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        f'val_dataloader.dataset.data_root={tiny_demo}',
        f'test_dataloader.dataset.data_root={tiny_demo}',
        'model.head.loss.w=(0.,2.)', 'model.head.loss.b=(-2.,-8.)',
        'model.head.loss.mu=(0.5,0.8)', 'model.head.loss.sigma=(2.,0.5)',
        'randomness.seed=0'
    ])
    scalars = glob.glob(osp.join(work, '*', 'vis_data', 'scalars.json'))
    assert scalars
    with open(scalars[0]) as f:
        rows = [json.loads(line) for line in f]
    train = [row for row in rows if 'w' in row]
    by_epoch = {row['epoch']: row for row in train}
    assert sorted(by_epoch) == [1, 2]
    # epoch 1 of 2: beta at 0/2, alpha at 1/2; epoch 2: beta 1/2, alpha 2/2
    expected = {1: dict(w=0., b=-2., mu=0.65, sigma=1.25),
                2: dict(w=1., b=-5., mu=0.8, sigma=0.5)}
    for epoch, values in expected.items():
        for name, value in values.items():
            assert by_epoch[epoch][name] == pytest.approx(value), name
        assert torch.isfinite(torch.tensor(by_epoch[epoch]['loss']))
