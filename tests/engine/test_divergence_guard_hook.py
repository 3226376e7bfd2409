"""SPMLDivergenceGuardHook: non-finite losses stop training, non-finite
models are never saved."""
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn
from mmengine.logging import MessageHub

from spml_mm.engine.hooks.divergence_guard_hook import (
    DivergenceError, SPMLDivergenceGuardHook)


def make_runner(name, model=None):
    hub = MessageHub(name)
    return SimpleNamespace(message_hub=hub, iter=41, epoch=2,
                           model=model or nn.Linear(3, 2))


def test_finite_losses_pass_and_a_nan_term_stops_with_names():
    hook = SPMLDivergenceGuardHook()
    runner = make_runner('guard_nan')
    runner.message_hub.update_scalar('train/loss', 0.7)
    runner.message_hub.update_scalar('train/loss_consistency', 0.1)
    runner.message_hub.update_scalar('train/lr', float('nan'))  # not a loss
    hook.after_train_iter(runner, 0)

    runner.message_hub.update_info('last_ckpt', 'work/epoch_2.pth')
    runner.message_hub.update_scalar('train/loss_consistency',
                                     float('inf'))
    with pytest.raises(DivergenceError,
                       match=r'non-finite loss at iteration 42 \(epoch 3\): '
                       r'loss=0.7, loss_consistency=inf\. Training stopped; '
                       r'the last checkpoint written is work/epoch_2.pth'):
        hook.after_train_iter(runner, 0)


def test_non_finite_weights_are_never_saved():
    hook = SPMLDivergenceGuardHook()
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    runner = make_runner('guard_save', model)
    hook.before_save_checkpoint(runner, {})
    model[1].running_var[1] = float('nan')
    with pytest.raises(DivergenceError,
                       match=r'1.running_var holds non-finite values after '
                       r'iteration 41; the checkpoint is not written\. The '
                       r'last checkpoint written is none yet'):
        hook.before_save_checkpoint(runner, {})
    model[1].running_var[1] = 1.
    with torch.no_grad():
        model[0].weight[0, 0] = float('-inf')
    with pytest.raises(DivergenceError, match='0.weight holds non-finite'):
        hook.before_save_checkpoint(runner, {})


def test_diverging_demo_run_stops_at_the_first_nan(tiny_demo, tmp_path):
    """Every config carries the guard: AN on the demo with a learning rate
    of 1e30 stops at its first non-finite loss, before saving anything."""
    import subprocess
    from tests.conftest import PYTHON, REPO
    proc = subprocess.run([
        PYTHON, 'tools/train.py', 'configs/an/vgg11bn_demo.py',
        '--work-dir', str(tmp_path), '--cfg-options',
        'train_cfg.max_epochs=1', 'optim_wrapper.optimizer.lr=1e30',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        f'val_dataloader.dataset.data_root={tiny_demo}'
    ], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert 'DivergenceError: non-finite loss at iteration ' in proc.stderr
    assert 'the last checkpoint written is none yet' in proc.stderr
    assert not list(tmp_path.glob('*.pth'))
