from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .base import BaseSPMLLoss
from .value_and_grad import differentiable


def an_value_and_grad(z: torch.Tensor,
                      s: torch.Tensor,
                      label_smoothing: float = 0.,
                      unobserved_weight: float = 1.,
                      n: Optional[torch.Tensor] = None
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Assume negative: BCE with every unobserved label as a negative.

    ``L = mean_{B x C} w * [softplus(z) - t z]`` with the target
    ``t = s (1 - 2 eps) + eps`` (AN-LS smooths with eps) and the weight
    ``w = s + (1 - s) lambda`` (WAN weighs unobserved labels by lambda);
    ``dL/dz = w (p - t) / (B C)``. An observed negative (``n``) is a
    negative of weight 1.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        label_smoothing (float): eps. Defaults to 0.
        unobserved_weight (float): lambda. Defaults to 1.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    t = s.to(z.dtype)
    if label_smoothing:
        t = t * (1 - 2 * label_smoothing) + label_smoothing
    w = None if unobserved_weight == 1 else torch.where(
        s > 0, 1., unobserved_weight).to(z.dtype)
    if w is not None and n is not None:
        w = w.masked_fill(n, 1.)
    value = F.binary_cross_entropy_with_logits(z, t, w)
    grad = torch.sigmoid(z).sub_(t).div_(z.numel())
    return value, grad if w is None else grad.mul_(w)


an_loss = differentiable(an_value_and_grad)


@MODELS.register_module()
class ANLoss(BaseSPMLLoss):
    """Assume-negative loss and its AN-LS and WAN variants.

    The loss is :func:`an_value_and_grad` (docs/methods/an.md, AN).

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
        if not (isinstance(label_smoothing, (int, float))
                and 0 <= label_smoothing < 0.5):
            raise ValueError('label_smoothing must be in [0, 0.5), got '
                             f'{label_smoothing!r}')
        if unobserved_weight != 'wan' and not (
                isinstance(unobserved_weight, (int, float))
                and 0 <= unobserved_weight < float('inf')):
            raise ValueError("unobserved_weight must be a float >= 0 or 'wan'"
                             f', got {unobserved_weight!r}')
        self.label_smoothing = label_smoothing
        self.unobserved_weight = unobserved_weight

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        weight = self.unobserved_weight
        if weight == 'wan':
            weight = 1. / (z.size(1) - 1)
        return an_loss(z, s, self.label_smoothing, weight, n)
