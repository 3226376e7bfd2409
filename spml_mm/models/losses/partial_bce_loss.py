from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .base import BaseSPMLLoss
from .value_and_grad import differentiable


def partial_bce_value_and_grad(z: torch.Tensor,
                               s: torch.Tensor,
                               alpha: float,
                               gamma: float,
                               n: Optional[torch.Tensor] = None
                               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Partial-BCE (Durand et al., CVPR 2019): BCE over the known labels
    only, normalised per image by the proportion of them.

    With ``p_y`` the share of image n's C labels that are known (observed
    positive or negative) and ``g(p_y) = alpha p_y^gamma + beta``,
    ``beta = 1 - alpha`` so that ``g(1) = 1`` (full labels give BCE)::

        L = mean_n g(p_y) / C sum_{c known} BCE(z_nc, s_nc)
        dL/dz_nc = g(p_y) [c known] (p_nc - s_nc) / (B C)

    Unobserved labels (neither ``s`` nor ``n``) cost nothing.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        alpha (float): alpha of g.
        gamma (float): gamma of g.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives. Defaults to None (the positives alone are known).

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    t = s.to(z.dtype)
    known = t if n is None else (s.bool() | n).to(z.dtype)
    p_y = known.mean(1, keepdim=True)
    g = alpha * p_y.pow(gamma) + (1 - alpha)
    weight = known * g / z.numel()
    value = F.binary_cross_entropy_with_logits(z, t, weight, reduction='sum')
    grad = torch.sigmoid(z).sub_(t).mul_(weight)
    return value, grad


partial_bce_loss = differentiable(partial_bce_value_and_grad)


@MODELS.register_module()
class PartialBCELoss(BaseSPMLLoss):
    """Partial-BCE of Durand, Mehrasa and Mori (CVPR 2019) for partial
    labels.

    The loss is :func:`partial_bce_value_and_grad` (docs/methods/partial_labels.md,
    Partial labels): BCE on the observed positives and observed negatives
    only, each image's sum weighted by ``g(p_y) = alpha p_y^gamma + beta``
    of its proportion ``p_y`` of known labels, with ``g(1) = 1``. The paper
    takes ``gamma = 1`` and ``g(0.1) = 5``; ``alpha`` and ``beta`` follow
    from ``g(0.1)`` and ``g(1) = 1``.

    Args:
        gamma (float): gamma > 0. Defaults to 1.
        scale_at_tenth (float): g(0.1), the weight of an image of which a
            tenth of the labels is known, > 0; it gives
            ``alpha = (1 - g(0.1)) / (1 - 0.1^gamma)``. Defaults to 5.

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048, loss=dict(type='PartialBCELoss'))
    """

    def __init__(self, gamma: float = 1., scale_at_tenth: float = 5.):
        super().__init__()
        for name, value in (('gamma', gamma),
                            ('scale_at_tenth', scale_at_tenth)):
            if not isinstance(value, (int, float)) or not (
                    0 < value < float('inf')):
                raise ValueError(f'{name} must be a number > 0, got '
                                 f'{value!r}')
        self.alpha = (1 - scale_at_tenth) / (1 - 0.1**gamma)
        if self.alpha > 1:
            raise ValueError(
                f'scale_at_tenth={scale_at_tenth} with gamma={gamma} makes '
                'g negative for images with few known labels; raise it.')
        self.gamma = gamma
        self.scale_at_tenth = scale_at_tenth

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        return partial_bce_loss(z, s, self.alpha, self.gamma, n)

    def extra_repr(self) -> str:
        return (f'gamma={self.gamma}, scale_at_tenth={self.scale_at_tenth}'
                f' (alpha={self.alpha:.6g}, beta={1 - self.alpha:.6g})')
