from typing import Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .utils import check_target


def an_loss(cls_score: torch.Tensor,
            target: torch.Tensor,
            label_smoothing: float = 0.,
            unobserved_weight: float = 1.) -> torch.Tensor:
    """Assume-negative BCE: unobserved labels count as negatives.

    Args:
        cls_score (torch.Tensor): Logits z, shape (B, C).
        target (torch.Tensor): Observed labels s in 0/1, shape (B, C).
        label_smoothing (float): Smoothing epsilon; targets become
            ``1 - eps`` and ``eps`` (AN-LS). Defaults to 0.
        unobserved_weight (float): Weight of the unobserved terms (WAN's
            lambda). Defaults to 1.

    Returns:
        torch.Tensor: Mean over B x C.
    """
    target = target.float()
    smoothed = target * (1 - 2 * label_smoothing) + label_smoothing
    loss = F.binary_cross_entropy_with_logits(
        cls_score.float(), smoothed, reduction='none')
    weight = target + (1 - target) * unobserved_weight
    return (loss * weight).mean()


@MODELS.register_module()
class ANLoss(nn.Module):
    """Assume-negative loss and its AN-LS and WAN variants (SPEC 2).

    Args:
        label_smoothing (float): Epsilon of AN-LS (0.1 in the papers), in
            [0, 0.5). Defaults to 0 (plain AN).
        unobserved_weight (float | str): Weight lambda of unobserved terms;
            ``'wan'`` sets WAN's ``1 / (C - 1)``. Defaults to 1 (plain AN).

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048, loss=dict(type='ANLoss'))
    """

    def __init__(self,
                 label_smoothing: float = 0.,
                 unobserved_weight: Union[float, str] = 1.):
        super().__init__()
        if not 0 <= label_smoothing < 0.5:
            raise ValueError('label_smoothing must be in [0, 0.5), got '
                             f'{label_smoothing}')
        if unobserved_weight != 'wan' and not (
                isinstance(unobserved_weight, (int, float))
                and unobserved_weight >= 0):
            raise ValueError("unobserved_weight must be a float >= 0 or 'wan'"
                             f', got {unobserved_weight!r}')
        self.label_smoothing = label_smoothing
        self.unobserved_weight = unobserved_weight

    def forward(self, cls_score: torch.Tensor,
                target: torch.Tensor) -> torch.Tensor:
        check_target(cls_score, target)
        weight = self.unobserved_weight
        if weight == 'wan':
            weight = 1. / (cls_score.size(1) - 1)
        return an_loss(cls_score, target, self.label_smoothing, weight)
