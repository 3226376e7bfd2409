"""``tools/train.py --amp`` with the SPML methods, on CPU in bf16.

``--amp`` makes the optimizer wrapper MMEngine's ``AmpOptimWrapper``, which
runs the forward pass and the loss under ``autocast`` and scales the loss
with a ``GradScaler``. It refuses to start without a GPU (an assertion in
its constructor); this test lifts only that check, so that on CPU autocast
runs in bf16 and the scaler disables itself (bf16 needs no loss scaling).
Everything else is what ``--amp`` does on a GPU: the head's logits are bf16,
the losses compute in float32, the pseudo-label hook scores under autocast.
fp16 with loss scaling needs a GPU and is not exercised here.
"""
import argparse
import importlib.util
import math
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import AmpOptimWrapper
from mmengine.optim.optimizer import amp_optimizer_wrapper
from mmengine.runner import Runner

from tests.conftest import REPO

# the test lifts AmpOptimWrapper's GPU check: on CPU torch's GradScaler says
# it disables itself, which is what bf16 wants
pytestmark = pytest.mark.filterwarnings(
    'ignore:torch.cuda.amp.GradScaler is enabled, but CUDA is not '
    'available:UserWarning')

spec = importlib.util.spec_from_file_location(
    'train_tool', osp.join(REPO, 'tools', 'train.py'))
train_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train_tool)

#: config -> (epochs, extra options): each method's tiny run
METHODS = {
    'configs/em_apl/em_apl_vgg11bn_demo.py': (2, {
        'default_hooks.pseudo_label.warmup_epochs': 1
    }),
    'configs/grloss/grloss_vgg11bn_demo.py': (1, {}),
    'configs/lasd/lasd_vgg11bn_demo.py': (1, {}),
    'configs/opml/opml_vgg11bn-sp_demo.py': (2, {
        'default_hooks.pseudo_label.updater.correction_start_epoch': 1
    }),
}


@pytest.mark.parametrize('config', sorted(METHODS))
def test_amp_training(config, tiny_demo, tmp_path, monkeypatch):
    monkeypatch.setattr(amp_optimizer_wrapper, 'is_cuda_available',
                        lambda: True)
    epochs, extra = METHODS[config]
    args = argparse.Namespace(
        work_dir=str(tmp_path), amp=True, resume=None, auto_scale_lr=False,
        no_pin_memory=False, no_persistent_workers=False, no_validate=True,
        launcher='none',
        cfg_options={
            'train_cfg.max_epochs': epochs,
            'train_dataloader.dataset.data_root': tiny_demo,
            'train_dataloader.dataset.indices': 32,  # one batch
            'test_dataloader.dataset.data_root': tiny_demo,
            'randomness.seed': 0,
            **extra
        })
    cfg = train_tool.merge_args(Config.fromfile(osp.join(REPO, config)), args)
    runner = Runner.from_cfg(cfg)
    dtypes = set()
    runner.model.head.fc.register_forward_hook(
        lambda module, inputs, output: dtypes.add(
            (module.training, output.dtype)))
    runner.train()

    assert isinstance(runner.optim_wrapper, AmpOptimWrapper)
    # bf16 logits in training and in the pseudo-label hook's scoring pass
    assert (True, torch.bfloat16) in dtypes
    bank = getattr(runner.model.head, 'label_bank', None)
    if bank is not None:  # the hook scored the training set
        assert (False, torch.bfloat16) in dtypes
    loss = runner.message_hub.get_scalar('train/loss').current()
    assert math.isfinite(loss) and loss > 0
    for name, param in runner.model.named_parameters():
        assert param.dtype == torch.float32 and torch.isfinite(
            param).all(), name
