from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class SPMLEpochHook(Hook):
    """Move epoch-scheduled loss parameters (GR's beta and alpha) and log
    them.

    Before every training epoch, calls ``set_epoch(runner.epoch,
    runner.max_epochs)`` (0-based epoch) on every module of the model that
    has it, wrappers such as DDP included, and writes the values it returns
    to the message hub as ``train/<name>``, so that they show in the log
    lines and the visualizer's scalars. Runs again on ``--resume``, so a
    resumed run continues its schedules.

    Example:
        >>> custom_hooks = [dict(type='SPMLEpochHook')]
    """

    def before_train_epoch(self, runner) -> None:
        for module in runner.model.modules():
            set_epoch = getattr(module, 'set_epoch', None)
            if not callable(set_epoch):
                continue
            values = set_epoch(runner.epoch, runner.max_epochs) or {}
            for name, value in values.items():
                runner.message_hub.update_scalar(f'train/{name}', value)
