from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .base import BaseSPMLLoss
from .value_and_grad import differentiable


def expected_positives_penalty(
        p: torch.Tensor,
        expected_positives: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """EPR's regularizer ``R(p) = (mean_n sum_i p_ni - k)^2 / C^2`` and its
    gradient with respect to the logits.

    ``dR/dz_ni = 2 (m - k) p_ni (1 - p_ni) / (B C^2)`` with
    ``m = mean_n sum_i p_ni``, the batch's mean predicted positive count.

    Args:
        p (torch.Tensor): Probabilities, shape (B, C).
        expected_positives (float): k, the expected positives per image.

    Returns:
        tuple: R (a scalar) and dR/dz (B, C).
    """
    batch, classes = p.shape
    gap = p.sum(1).mean() - expected_positives
    value = gap.square() / classes**2
    grad = p * (1 - p) * (2 * gap / (batch * classes**2))
    return value, grad


def epr_value_and_grad(z: torch.Tensor, s: torch.Tensor,
                       expected_positives: float,
                       n: Optional[torch.Tensor] = None
                       ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Expected positive regularization (EPR), Cole et al. 2021, Sec. 3.

    The observed labels' log loss, summed and divided by B x C, plus the
    regularizer :func:`expected_positives_penalty` (weight 1)::

        L = [sum_{s = 1} -log p + sum_{n = 1} -log(1 - p)] / (B C)
            + (m - k)^2 / C^2                                  (p = p_ni)
        dL/dz_ni = (s (p - 1) + n p) / (B C) + 2 (m - k) p (1 - p) / (B C^2)

    Unobserved entries enter only through the regularizer; observed
    negatives (partial labels, ``n``) are known negatives.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        expected_positives (float): k.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    positive = s > 0
    p = torch.sigmoid(z)
    value = torch.where(positive, -F.logsigmoid(z), 0.)
    grad = torch.where(positive, p - 1, 0.)
    if n is not None:  # -log(1 - p) = -log sigmoid(-z)
        value = torch.where(n, -F.logsigmoid(-z), value)
        grad = torch.where(n, p, grad)
    value, grad = value.mean(), grad.div_(z.numel())
    penalty, d_penalty = expected_positives_penalty(p, expected_positives)
    return value + penalty, grad.add_(d_penalty)


epr_loss = differentiable(epr_value_and_grad)


def checked_expected_positives(k: float) -> float:
    """``k`` as a float, refused unless it is a finite number > 0. That it
    does not exceed the number of classes is checked where both are known
    (``SPMLDatasetCheckHook``)."""
    if not (isinstance(k, (int, float)) and 0 < k < float('inf')):
        raise ValueError('expected_positives (k) must be a finite number > 0,'
                         f' got {k!r}')
    return float(k)


@MODELS.register_module()
class EPRLoss(BaseSPMLLoss):
    """Expected positive regularization (EPR) of Cole et al. (CVPR 2021).

    The loss is :func:`epr_value_and_grad` (docs/methods/epr.md): the
    observed positives' log loss plus a penalty on the distance between the
    batch's mean predicted positive count and the expected number of
    positives per image.

    Args:
        expected_positives (float): k, the expected number of positives per
            image, > 0; the dataset's average in the paper: VOC 1.5, COCO
            2.9, NUS-WIDE 1.9, CUB 31.4 (the demo data: 2.06).

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048,
        ...             loss=dict(type='EPRLoss', expected_positives=1.5))
    """

    def __init__(self, expected_positives: float):
        super().__init__()
        self.expected_positives = checked_expected_positives(
            expected_positives)

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        return epr_loss(z, s, self.expected_positives, n)
