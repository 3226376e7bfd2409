from typing import Optional

import torch
from mmpretrain.registry import MODELS

from .spml_data_preprocessor import SPMLDataPreprocessor


def is_multi_view(inputs) -> bool:
    """Whether collated inputs hold several views of each sample.

    ``MultiView`` + ``PackInputs`` give each sample a list of V images. After
    ``pseudo_collate`` the batch is a list of V lists of B images, after
    ``default_collate`` a list of V tensors (B, C, H, W); a single-view batch
    is a list of images (C, H, W) or one tensor (B, C, H, W).
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        return False
    first = inputs[0]
    return isinstance(first, (list, tuple)) or (
        isinstance(first, torch.Tensor) and first.dim() == 4)


def split_views(cls_score: torch.Tensor, num_samples: int) -> torch.Tensor:
    """Undo the view stacking of :class:`MultiViewDataPreprocessor`.

    Args:
        cls_score (torch.Tensor): Outputs of V x B stacked inputs, view
            major, shape (V * B, ...).
        num_samples (int): Number of samples B.

    Returns:
        torch.Tensor: Shape (V, B, ...); row 0 is the first view.
    """
    num_views, rest = divmod(cls_score.size(0), num_samples)
    if rest or not num_views:
        raise ValueError(
            f'{cls_score.size(0)} outputs for {num_samples} samples: the '
            'batch must hold the same number of views of every sample')
    return cls_score.view(num_views, num_samples, *cls_score.shape[1:])


@MODELS.register_module()
class MultiViewDataPreprocessor(SPMLDataPreprocessor):
    """:class:`SPMLDataPreprocessor` that also takes several views per
    sample.

    A training pipeline with ``MultiView`` yields V augmented views of every
    image. This preprocessor stacks them view-major into one batch of
    V x B images (all of view 0, then all of view 1, ...), so the backbone
    runs every view in one forward pass; the data samples stay B. Heads
    recover the views with :func:`split_views`. The V x B images move to the
    device in one copy, the labels in another (:class:`SPMLDataPreprocessor`).
    Single-view batches (validation, test) are processed exactly as by
    :class:`SPMLDataPreprocessor`.

    Args:
        batch_augments (dict, optional): Not supported (Mixup/CutMix would
            mix labels of B samples with V x B images); must be None.
        *args: The other positional arguments of
            :class:`SPMLDataPreprocessor`.
        **kwargs: Its other keyword arguments.

    Example:
        >>> data_preprocessor = dict(type='MultiViewDataPreprocessor',
        ...                          mean=[123.675, 116.28, 103.53],
        ...                          std=[58.395, 57.12, 57.375], to_rgb=True)
    """

    def __init__(self, *args, batch_augments: Optional[dict] = None,
                 **kwargs):
        if batch_augments:
            raise ValueError(
                'MultiViewDataPreprocessor does not support batch_augments: '
                'they mix the labels of B samples while the batch holds '
                'V x B views; set batch_augments=None')
        super().__init__(*args, **kwargs)

    @torch.compiler.disable
    def forward(self, data: dict, training: bool = False) -> dict:
        inputs = data['inputs']
        if is_multi_view(inputs):
            if isinstance(inputs[0], torch.Tensor):
                stacked = torch.cat(list(inputs))
            else:
                stacked = [image for view in inputs for image in view]
            data = dict(data, inputs=stacked)
        return super().forward(data, training)
