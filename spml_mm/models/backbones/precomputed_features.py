from typing import Optional

import torch
from mmengine.model import BaseModule
from mmpretrain.registry import MODELS


@MODELS.register_module()
class PrecomputedFeatures(BaseModule):
    """The backbone of a model trained on cached features.

    Passes the (B, D, 1, 1) features of ``LoadCachedFeatures`` on as a
    backbone output, so the neck (``GlobalAveragePooling``) and any SPML head
    take them as they would take a frozen backbone's. Nothing is trained.

    Args:
        feature_dim (int): D, the cached features' size; other inputs are
            refused with the cache's size in the message.
        init_cfg (dict, optional): Unused (nothing to initialise); accepted
            as every MMPretrain backbone does. Defaults to None.

    Example:
        >>> model = dict(
        ...     type='ImageClassifier',
        ...     backbone=dict(type='PrecomputedFeatures', feature_dim=1280),
        ...     neck=dict(type='GlobalAveragePooling'),
        ...     head=dict(type='SPMLLinearClsHead', num_classes=20,
        ...               in_channels=1280, loss=dict(type='ANLoss')))
    """

    def __init__(self, feature_dim: int, init_cfg: Optional[dict] = None):
        super().__init__(init_cfg=init_cfg)
        self.feature_dim = feature_dim

    def forward(self, x: torch.Tensor) -> tuple:
        if x.dim() != 4 or x.shape[1] != self.feature_dim or \
                x.shape[2:] != (1, 1):
            raise ValueError(
                f'PrecomputedFeatures(feature_dim={self.feature_dim}) takes '
                f'cached features of shape (B, {self.feature_dim}, 1, 1), got '
                f'{tuple(x.shape)}: the feature cache was written by another '
                'backbone, or the pipeline loads images instead of '
                'LoadCachedFeatures')
        return (x, )
