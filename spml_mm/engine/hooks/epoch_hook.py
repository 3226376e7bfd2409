from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

from spml_mm.models.epoch_scheduled import EpochScheduled


@HOOKS.register_module()
class SPMLEpochHook(Hook):
    """Move epoch-scheduled loss parameters (GR's beta and alpha) and log
    them.

    Before every training epoch, calls ``set_epoch(runner.epoch,
    runner.max_epochs)`` (0-based epoch) on every module of the model that
    is an :class:`~spml_mm.models.epoch_scheduled.EpochScheduled` (GR's and
    the unified framework's losses, LL's), wrappers such as DDP included,
    and writes the values it returns
    to the message hub as ``train/<name>``, so that they show in the log
    lines and the visualizer's scalars. Runs again on ``--resume``, so a
    resumed run continues its schedules.

    Example:
        >>> custom_hooks = [dict(type='SPMLEpochHook')]
    """

    def before_train_epoch(self, runner) -> None:
        for module in runner.model.modules():
            if not isinstance(module, EpochScheduled):
                continue
            values = module.set_epoch(runner.epoch, runner.max_epochs) or {}
            for name, value in values.items():
                runner.message_hub.update_scalar(f'train/{name}', value)
