from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

from ...models.data_preprocessors import MultiViewDataPreprocessor
from .base import unwrapped_model


@HOOKS.register_module()
class MultiViewCheckHook(Hook):
    """Fail before the first iteration when views and model disagree.

    Reads one training sample and counts its views (a list of images from
    ``MultiView``, else one). Raises ``ValueError`` when the head has a
    consistency term but the pipeline yields fewer than two views, or when
    the pipeline yields several views but the model's data preprocessor is
    not a :class:`MultiViewDataPreprocessor`.

    Example:
        >>> custom_hooks = [dict(type='MultiViewCheckHook')]
    """

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        model = unwrapped_model(runner)
        dataset = runner.train_dataloader.dataset
        inputs = dataset[0]['inputs']
        num_views = len(inputs) if isinstance(inputs, (list, tuple)) else 1
        head = getattr(model, 'head', None)
        if getattr(head, 'consistency', None) is not None and num_views < 2:
            raise ValueError(
                f'model.head.consistency needs at least 2 views per image but '
                f'the training pipeline yields {num_views}; wrap its '
                "augmentations in dict(type='MultiView', num_views=...) or "
                'set model.head.consistency=None')
        if num_views > 1 and not isinstance(model.data_preprocessor,
                                            MultiViewDataPreprocessor):
            raise ValueError(
                f'the training pipeline yields {num_views} views per image '
                'but the model\'s data preprocessor is '
                f'{type(model.data_preprocessor).__name__}; set '
                "data_preprocessor=dict(type='MultiViewDataPreprocessor')")
