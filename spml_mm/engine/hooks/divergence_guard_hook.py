import math
from typing import Optional

import torch
from mmengine.hooks import Hook
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from mmpretrain.registry import HOOKS

from spml_mm.utils import find_last_checkpoint
from .base import unwrapped_model


class DivergenceError(RuntimeError):
    """Training produced a non-finite loss or model."""


@HOOKS.register_module()
class SPMLDivergenceGuardHook(Hook):
    """Stop a run whose loss, gradients or weights stop being finite.

    After every training iteration the logged loss terms (``train/loss*`` in
    the message hub, which MMEngine has already copied to the host) and the
    gradient norm (``train/grad_norm``) are checked; a NaN or infinite value
    stops training with a :class:`DivergenceError` that names the iteration,
    every loss term, the gradient norm and the last checkpoint written
    (the one ``last_checkpoint`` names), so nothing is trained or saved from
    a diverged state.

    Before training the optimizer's learning rates are checked (finite,
    >= 0), since PyTorch's optimizers accept an infinite one.

    The gradient norm is measured where MMEngine's optimizer wrapper clips
    gradients (``optim_wrapper.clip_grad`` by norm, whose norm it takes;
    without ``clip_grad`` the guard measures it, without clipping), but it
    stays on the device during the step: it is read back after the step,
    where MMEngine reads the losses, and logged as ``train/grad_norm``
    (MMEngine's wrapper would read it in the middle of the step, a device
    synchronisation and, in a compiled step, a graph break). Under
    ``AmpOptimWrapper`` an infinite gradient is the loss scaler's normal
    overflow signal (the step is skipped), so only the losses are checked
    there, and clipping by value has no norm to check. Before any checkpoint
    is written the model's parameters and buffers are checked as well, so a
    non-finite model is never saved, as the best checkpoint or otherwise. It
    adds no device synchronisation to the training step: the losses and the
    norm are read after it, the weights once per checkpoint.

    Every SPML config has it as ``default_hooks.divergence_guard``; set that
    to None to train on regardless.

    Args:
        check_grad_norm (bool): Check the gradient norm too (measuring it if
            the config does not clip gradients). Defaults to True.

    Example:
        >>> default_hooks = dict(
        ...     divergence_guard=dict(type='SPMLDivergenceGuardHook'))
    """

    # after the runtime-info hook has logged the iteration's losses, before
    # the logger writes them
    priority = 'NORMAL'

    def __init__(self, check_grad_norm: bool = True):
        self.check_grad_norm = check_grad_norm
        self.grad_norm = None  # the step's, on the device

    def before_train(self, runner) -> None:
        wrapper = runner.optim_wrapper
        for k, group in enumerate(
                getattr(getattr(wrapper, 'optimizer', None), 'param_groups',
                        [])):
            lr = group.get('lr')
            if isinstance(lr, (int, float)) and not 0 <= lr < math.inf:
                raise ValueError(
                    f'optimizer learning rate lr={lr} (param group {k}) must '
                    'be a finite number >= 0; check optim_wrapper.optimizer.lr'
                    ' and the param_scheduler.')
        if (not self.check_grad_norm or isinstance(wrapper, AmpOptimWrapper)
                or not isinstance(wrapper, OptimWrapper)
                or (wrapper.clip_grad_kwargs and
                    wrapper.clip_func is not torch.nn.utils.clip_grad_norm_)):
            return
        clip = wrapper.clip_func if wrapper.clip_grad_kwargs else None

        def keep_norm(params, **kwargs) -> None:
            """Clip (``clip_grad``) or measure the norm, kept on the device;
            None tells the wrapper that there is nothing to read."""
            self.grad_norm = clip(params, **kwargs) if clip else \
                torch.nn.utils.get_total_norm([p.grad for p in params],
                                              **kwargs)

        wrapper.clip_func = keep_norm
        wrapper.clip_grad_kwargs = wrapper.clip_grad_kwargs or dict(
            norm_type=2.0)

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs: Optional[dict] = None) -> None:
        hub = runner.message_hub
        if self.grad_norm is not None:
            hub.update_scalar('train/grad_norm', float(self.grad_norm))
            self.grad_norm = None
        checked = ['train/loss']
        if self.check_grad_norm and not isinstance(runner.optim_wrapper,
                                                   AmpOptimWrapper):
            checked.append('train/grad_norm')
        terms = {
            key[len('train/'):]: hub.get_scalar(key).current()
            for key in hub.log_scalars
            if key.startswith(tuple(checked))
        }
        if all(math.isfinite(v) for v in terms.values()):
            return
        values = ', '.join(f'{k}={v}' for k, v in terms.items())
        what = 'loss' if not all(
            math.isfinite(v) for k, v in terms.items()
            if k.startswith('loss')) else 'gradient norm'
        raise DivergenceError(
            f'non-finite {what} at iteration {runner.iter + 1} (epoch '
            f'{runner.epoch + 1}): {values}. Training stopped; the last '
            f'checkpoint written is {self._last_checkpoint(runner)}; resume '
            'from it with a lower learning rate (or without --amp).')

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        model = unwrapped_model(runner)
        for name, tensor in list(model.named_parameters()) + list(
                model.named_buffers()):
            if tensor.is_floating_point() and not torch.isfinite(
                    tensor).all():
                raise DivergenceError(
                    f'{name} holds non-finite values after iteration '
                    f'{runner.iter}; the checkpoint is not written. The last '
                    f'checkpoint written is {self._last_checkpoint(runner)}.')

    @staticmethod
    def _last_checkpoint(runner) -> str:
        try:
            return find_last_checkpoint(runner.work_dir) or 'none yet'
        except FileNotFoundError as err:
            return f'unknown ({err})'
