import math
from typing import Optional

import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS


class DivergenceError(RuntimeError):
    """Training produced a non-finite loss or model."""


@HOOKS.register_module()
class SPMLDivergenceGuardHook(Hook):
    """Stop a run whose loss or weights stop being finite.

    After every training iteration the logged loss terms (``train/loss*`` in
    the message hub, which MMEngine has already copied to the host) are
    checked; a NaN or infinite term stops training with a
    :class:`DivergenceError` that names the iteration, every loss term and
    the last checkpoint written, so nothing is trained or saved from a
    diverged state. Before any checkpoint is written the model's parameters
    and buffers are checked as well, so a non-finite model is never saved,
    as the best checkpoint or otherwise. It adds no device synchronisation
    to the training step: the losses are read where the logger reads them,
    the weights once per checkpoint.

    Every SPML config has it as ``default_hooks.divergence_guard``; set that
    to None to train on regardless.

    Example:
        >>> default_hooks = dict(
        ...     divergence_guard=dict(type='SPMLDivergenceGuardHook'))
    """

    # after the runtime-info hook has logged the iteration's losses
    priority = 'LOW'

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs: Optional[dict] = None) -> None:
        hub = runner.message_hub
        terms = {
            key[len('train/'):]: hub.get_scalar(key).current()
            for key in hub.log_scalars
            if key.startswith('train/loss')
        }
        if all(math.isfinite(v) for v in terms.values()):
            return
        values = ', '.join(f'{k}={v}' for k, v in terms.items())
        raise DivergenceError(
            f'non-finite loss at iteration {runner.iter + 1} (epoch '
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
        return runner.message_hub.get_info('last_ckpt') or 'none yet'
