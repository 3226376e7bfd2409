from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class SPMLDatasetCheckHook(Hook):
    """Fail before the first iteration when head and dataset disagree.

    Compares the head's ``num_classes`` with the classes of every dataset the
    run uses, so a mismatch names both numbers instead of surfacing later as
    an indexing error.
    """

    priority = 'VERY_HIGH'

    def _check(self, runner, loader_name: str) -> None:
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        head = getattr(model, 'head', None)
        num_classes = getattr(head, 'num_classes', None)
        loader = getattr(runner, loader_name)
        dataset = getattr(loader, 'dataset', None)
        classes = (getattr(dataset, 'metainfo', None) or {}).get('classes')
        if num_classes is None or classes is None:
            return
        if len(classes) != num_classes:
            raise ValueError(
                f'model.head.num_classes={num_classes} but the '
                f'{loader_name.replace("_dataloader", "")} dataset '
                f'({type(dataset).__name__}) has {len(classes)} classes; set '
                f'model.head.num_classes={len(classes)} in the config.')

    def before_train(self, runner) -> None:
        self._check(runner, 'train_dataloader')
        if runner.val_loop is not None:
            self._check(runner, 'val_dataloader')

    def before_test(self, runner) -> None:
        self._check(runner, 'test_dataloader')
