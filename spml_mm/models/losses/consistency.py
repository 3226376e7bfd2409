from typing import Tuple

import torch
import torch.nn as nn
from mmpretrain.registry import MODELS

from .value_and_grad import differentiable


def consistency_value_and_grad(views: torch.Tensor
                               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Pairwise squared distance between the views' probabilities.

    ``Phi = sum_{i<j} ||p_i - p_j||^2`` per sample (LASD Eq. 7 for three
    views), summed over classes and averaged over the B samples. Per entry
    ``sum_{i<j} (p_i - p_j)^2 = V sum_i (p_i - pbar)^2`` with ``pbar`` the
    views' mean, so ``dPhi/dz_i = 2 V (p_i - pbar) p_i (1 - p_i) / B``.

    Args:
        views (torch.Tensor): Logits of V views, shape (V, B, C), float32.

    Returns:
        tuple: Phi (a scalar) and its gradient (V, B, C).
    """
    p = torch.sigmoid(views)
    num_views, num_samples = views.shape[:2]
    spread = p - p.mean(0)
    flat = spread.view(-1)
    value = flat.dot(flat) * (num_views / num_samples)
    # p (1 - p) = p - p^2, scaled by 2 V / B, times the spread
    slope = torch.addcmul(p, p, p, value=-1)
    grad = spread.mul_(slope).mul_(2 * num_views / num_samples)
    return value, grad


_view_consistency = differentiable(consistency_value_and_grad)


def view_consistency(view_scores: torch.Tensor) -> torch.Tensor:
    """:func:`consistency_value_and_grad` as a loss of the (V, B, C) logits,
    V >= 2."""
    if view_scores.dim() != 3 or view_scores.size(0) < 2:
        raise ValueError(
            'the consistency term needs logits of shape (V, B, C) with V >= 2 '
            f'views, got {tuple(view_scores.shape)}; wrap the training '
            "augmentations in dict(type='MultiView', num_views=...) so the "
            'pipeline yields at least 2 views per image, or remove '
            'model.head.consistency')
    return _view_consistency(view_scores)


@MODELS.register_module()
class ViewConsistency(nn.Module):
    """Consistency regularization across augmented views (LASD Eq. 7-8).

    Added by a head to its supervised loss as ``alpha * Phi``, where Phi is
    :func:`view_consistency` of the logits of all views of each image. It
    needs a multi-view training pipeline (``MultiView``) and the
    ``MultiViewDataPreprocessor``.

    Args:
        alpha (float): Weight alpha of the term, >= 0 (LASD Table 4: VOC
            0.70, COCO 0.10, NUS 0.15, CUB 0.03). Defaults to 1.

    Example:
        >>> head = dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='LASDLoss', lambda_pos=0.1, tau=0.9,
        ...               avg_positives=1.46, num_classes=20),
        ...     consistency=dict(type='ViewConsistency', alpha=0.7))
    """

    def __init__(self, alpha: float = 1.):
        super().__init__()
        if not 0 <= alpha < float('inf'):
            raise ValueError(f'alpha must be >= 0, got {alpha}')
        self.alpha = alpha

    def forward(self, view_scores: torch.Tensor) -> torch.Tensor:
        """Weighted consistency of logits of shape (V, B, C), V >= 2."""
        return self.alpha * view_consistency(view_scores)

    def extra_repr(self) -> str:
        return f'alpha={self.alpha}'
