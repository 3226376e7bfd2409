from typing import Callable, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .epr_loss import checked_expected_positives, expected_positives_penalty
from .value_and_grad import differentiable


def role_value_and_grad(z: torch.Tensor, s: torch.Tensor, u: torch.Tensor,
                        expected_positives: float,
                        n: Optional[torch.Tensor] = None
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Regularized online label estimation (ROLE), Cole et al. 2021, Sec. 3.

    ``u`` are the batch's label-estimate logits (``q = sigmoid(u)``), ``sg``
    stops the gradient; with ``R`` EPR's regularizer
    (:func:`expected_positives_penalty`)::

        L = sum_{B x C} [ O / 2 + (BCE(p, sg q) + BCE(q, sg p)) / 2 ] / (B C)
            + (R(p) + R(q)) / 2
        O = -log p - log q  (s = 1),  -log(1 - p) - log(1 - q)  (n = 1),  0
        dL/dz = [ dO/dz + p - q ] / (2 B C) + dR(p)/dz / 2
        dO/dz = p - 1  (s = 1),  p  (n = 1),  0

    Observed negatives (partial labels, ``n``) are known negatives of
    both the classifier and the estimates. The loss is symmetric in
    ``(z, u)``: ``role_value_and_grad(u, s, z, k, n)`` gives the same value and
    ``dL/du``, the label estimates' gradient.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        u (torch.Tensor): Label-estimate logits, shape (B, C).
        expected_positives (float): k of the regularizer.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient with respect to ``z``.
    """
    positive = s > 0
    u = u.to(z.dtype)
    p, q = torch.sigmoid(z), torch.sigmoid(u)
    # -log p = softplus(-z); BCE(p, t) = softplus(z) - t z
    observed = torch.where(positive, F.softplus(-z) + F.softplus(-u), 0.)
    d_observed = torch.where(positive, p - 1, 0.)
    if n is not None:  # -log(1 - p) = softplus(z)
        observed = torch.where(n, F.softplus(z) + F.softplus(u), observed)
        d_observed = torch.where(n, p, d_observed)
    cross = F.softplus(z) - q * z + F.softplus(u) - p * u
    penalty_p, d_penalty = expected_positives_penalty(p, expected_positives)
    penalty_q, _ = expected_positives_penalty(q, expected_positives)
    value = 0.5 * ((observed + cross).mean() + penalty_p + penalty_q)
    grad = (d_observed + p - q).div_(2 * z.numel())
    return value, grad.add_(d_penalty, alpha=0.5)


role_loss = differentiable(role_value_and_grad)


@MODELS.register_module()
class ROLELoss(nn.Module):
    """ROLE (regularized online label estimation) of Cole et al. (CVPR
    2021).

    The loss is :func:`role_value_and_grad` (docs/methods/role.md): the
    classifier and a learned table of per-sample label estimates train each
    other, both regularized by EPR. The table is the head's
    ``label_bank=dict(type='LabelEstimateTable', lr=...)``, which passes the
    batch's rows (``estimate_logits``) and steps them with ``dL/du``
    (``step_estimates``) in the training step; ``SPMLSampleStateHook`` sizes
    it and merges the ranks' rows after each epoch.

    Args:
        expected_positives (float): k of EPR's regularizer, > 0 (VOC 1.5,
            COCO 2.9, NUS-WIDE 1.9, CUB 31.4, the demo 2.06).

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048,
        ...             loss=dict(type='ROLELoss', expected_positives=1.5),
        ...             label_bank=dict(type='LabelEstimateTable', lr=1e-4))
        >>> default_hooks = dict(
        ...     sample_state=dict(type='SPMLSampleStateHook'))
    """

    def __init__(self, expected_positives: float):
        super().__init__()
        self.expected_positives = checked_expected_positives(
            expected_positives)

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                estimate_logits: Optional[torch.Tensor] = None,
                step_estimates: Optional[Callable] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss; step the batch's label estimates.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            estimate_logits (torch.Tensor): The batch's rows of the label
                estimate table (B, C).
            step_estimates (Callable): The table's optimizer step of these
                rows, given their gradient (B, C).
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        if estimate_logits is None or step_estimates is None:
            raise ValueError(
                "ROLELoss learns per-sample label estimates: use head "
                "type='SPMLLinearClsHead' with "
                "label_bank=dict(type='LabelEstimateTable', lr=...)")
        k = self.expected_positives
        if self.training:
            z = cls_score.detach().float()
            _, grad_u = role_value_and_grad(estimate_logits, target, z, k,
                                            observed_negative)
            step_estimates(grad_u)
        return role_loss(cls_score, target, estimate_logits, k,
                         observed_negative)
