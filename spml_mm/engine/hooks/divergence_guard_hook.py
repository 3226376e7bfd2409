import math
from typing import Optional

import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from mmpretrain.registry import HOOKS

from spml_mm.utils import find_last_checkpoint


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

    The gradient norm is the one MMEngine's optimizer wrapper logs when
    ``optim_wrapper.clip_grad`` is set. Without it the guard has the wrapper
    measure the norm with ``clip_grad=dict(max_norm=inf)``, which scales the
    gradients by exactly 1 (results are unchanged) at the cost of one norm
    per iteration. Under ``AmpOptimWrapper`` an infinite gradient is the loss
    scaler's normal overflow signal (the step is skipped), so only the losses
    are checked there. Before any checkpoint is written the model's parameters
    and buffers are checked as well, so a non-finite model is never saved,
    as the best checkpoint or otherwise. It adds no device synchronisation
    to the training step: the losses are read where the logger reads them,
    the weights once per checkpoint.

    Every SPML config has it as ``default_hooks.divergence_guard``; set that
    to None to train on regardless.

    Args:
        check_grad_norm (bool): Check the gradient norm too (measuring it if
            the config does not clip gradients). Defaults to True.

    Example:
        >>> default_hooks = dict(
        ...     divergence_guard=dict(type='SPMLDivergenceGuardHook'))
    """

    # after the runtime-info hook has logged the iteration's losses
    priority = 'LOW'

    def __init__(self, check_grad_norm: bool = True):
        self.check_grad_norm = check_grad_norm

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
                or wrapper.clip_grad_kwargs):
            return
        wrapper.clip_func = torch.nn.utils.clip_grad_norm_
        wrapper.clip_grad_kwargs = dict(max_norm=math.inf)
        wrapper.grad_name = 'grad_norm'

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs: Optional[dict] = None) -> None:
        hub = runner.message_hub
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
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
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
