"""SPMLDivergenceGuardHook: non-finite losses stop training, non-finite
models are never saved."""
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from mmengine.optim import AmpOptimWrapper, OptimWrapper

from spml_mm.engine.hooks.divergence_guard_hook import (
    DivergenceError, SPMLDivergenceGuardHook)


def make_runner(name, model=None, work_dir='no-such-dir', optim_wrapper=None):
    hub = MessageHub(name)
    return SimpleNamespace(message_hub=hub, iter=41, epoch=2,
                           model=model or nn.Linear(3, 2), work_dir=work_dir,
                           optim_wrapper=optim_wrapper)


def test_finite_losses_pass_and_a_nan_term_stops_with_names(tmp_path):
    hook = SPMLDivergenceGuardHook()
    runner = make_runner('guard_nan', work_dir=str(tmp_path))
    runner.message_hub.update_scalar('train/loss', 0.7)
    runner.message_hub.update_scalar('train/loss_consistency', 0.1)
    runner.message_hub.update_scalar('train/lr', float('nan'))  # not a loss
    hook.after_train_iter(runner, 0)

    (tmp_path / 'epoch_2.pth').write_bytes(b'x')
    (tmp_path / 'last_checkpoint').write_text('epoch_2.pth')
    runner.message_hub.update_scalar('train/loss_consistency',
                                     float('inf'))
    with pytest.raises(DivergenceError,
                       match=r'non-finite loss at iteration 42 \(epoch 3\): '
                       r'loss=0.7, loss_consistency=inf\. Training stopped; '
                       rf'the last checkpoint written is '
                       rf'{tmp_path}/epoch_2.pth'):
        hook.after_train_iter(runner, 0)


def guarded(name, model, **wrapper_options):
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1),
                           **wrapper_options)
    runner = make_runner(name, model, optim_wrapper=wrapper)
    hook = SPMLDivergenceGuardHook()
    hook.before_train(runner)
    return hook, runner


def test_a_non_finite_gradient_norm_stops_with_names():
    """Without clip_grad the guard measures the gradient norm (the step is
    unchanged), read and logged after the step; an infinite norm stops
    training."""
    model = nn.Linear(3, 1)
    hook, runner = guarded('guard_grad', model)
    plain = nn.Linear(3, 1)
    plain.load_state_dict(model.state_dict())
    plain_wrapper = OptimWrapper(torch.optim.SGD(plain.parameters(), lr=0.1))
    x = torch.tensor([[1., 2., 3.]])
    plain_wrapper.update_params(plain(x).sum())
    runner.optim_wrapper.update_params(model(x).sum())
    # the step is the plain one, bit for bit
    torch.testing.assert_close(model.state_dict(), plain.state_dict(),
                               rtol=0, atol=0)
    assert 'train/grad_norm' not in runner.message_hub.log_scalars
    runner.message_hub.update_scalar('train/loss', 0.5)
    hook.after_train_iter(runner, 0)
    assert runner.message_hub.get_scalar('train/grad_norm').current() == \
        pytest.approx((1 + 4 + 9 + 1)**0.5)
    hook.grad_norm = torch.tensor(float('inf'))
    with pytest.raises(DivergenceError,
                       match=r'non-finite gradient norm at iteration 42 '
                       r'\(epoch 3\): loss=0.5, grad_norm=inf\. Training '
                       r'stopped; the last checkpoint written is none yet'):
        hook.after_train_iter(runner, 0)
    # under AMP an infinite gradient is the loss scaler's overflow signal
    runner.optim_wrapper = AmpOptimWrapper.__new__(AmpOptimWrapper)
    hook.after_train_iter(runner, 0)


def test_a_clipped_step_keeps_its_clipping_and_logs_the_norm_after_it():
    """With clip_grad by norm the wrapper clips as configured; the guard
    logs the norm before clipping, as MMEngine's wrapper would, after the
    step."""
    model, plain = nn.Linear(3, 1), nn.Linear(3, 1)
    plain.load_state_dict(model.state_dict())
    clip = dict(clip_grad=dict(max_norm=1.))
    hook, runner = guarded('guard_clip', model, **clip)
    plain_wrapper = OptimWrapper(torch.optim.SGD(plain.parameters(), lr=0.1),
                                 **clip)
    x = torch.tensor([[1., 2., 3.]])
    plain_wrapper.update_params(plain(x).sum())
    runner.optim_wrapper.update_params(model(x).sum())
    torch.testing.assert_close(model.state_dict(), plain.state_dict(),
                               rtol=0, atol=0)
    runner.message_hub.update_scalar('train/loss', 0.5)
    hook.after_train_iter(runner, 0)
    assert runner.message_hub.get_scalar('train/grad_norm').current() == \
        pytest.approx(15**0.5)


@pytest.mark.parametrize('clip_grad', [None, dict(max_norm=1.)])
def test_the_guarded_step_reads_no_device_value(clip_grad):
    """The norm stays on the device during the step (MMEngine's wrapper
    reads it back in the middle of the step): counted on the meta device,
    which stands in for a GPU."""
    from tests.sync_counting import count_syncs
    model = nn.Linear(3, 1).to('meta')
    _, runner = guarded('guard_sync', model,
                        **(dict(clip_grad=clip_grad) if clip_grad else {}))
    loss = model(torch.ones(2, 3, device='meta')).sum()
    with count_syncs() as counter:
        runner.optim_wrapper.update_params(loss)
    assert counter.syncs('model') == []


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


@pytest.mark.slow
def test_diverging_demo_run_stops_at_the_first_nan(tiny_demo, tmp_path):
    """Every config carries the guard: AN on the demo with a learning rate
    of 1e30 stops at its first non-finite loss, before saving anything."""
    import subprocess
    from tests.conftest import PYTHON, REPO
    proc = subprocess.run([
        PYTHON, 'tools/train.py', 'configs/an/an_vgg11bn_demo.py',
        '--work-dir', str(tmp_path), '--cfg-options',
        'train_cfg.max_epochs=1', 'optim_wrapper.optimizer.lr=1e30',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        f'val_dataloader.dataset.data_root={tiny_demo}'
    ], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert 'DivergenceError: non-finite loss at iteration ' in proc.stderr
    assert 'the last checkpoint written is none yet' in proc.stderr
    assert not list(tmp_path.glob('*.pth'))
