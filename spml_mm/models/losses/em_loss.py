from typing import Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..label_states import PSEUDO_NEGATIVE
from .value_and_grad import differentiable, indicator


def em_value_and_grad(z: torch.Tensor,
                      s: torch.Tensor,
                      alpha: float = 0.1,
                      beta: float = 0.2,
                      pseudo_negative: Optional[torch.Tensor] = None,
                      soft_label: Optional[torch.Tensor] = None,
                      n: Optional[torch.Tensor] = None
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Entropy maximization (EM) with APL's soft negative pseudo-labels.

    Per entry, mean over B x C (EM paper Eq. 3-4 and 7-8)::

        observed positive         -log p                  dL/dz = p - 1
        observed negative         -log(1 - p)             p
        negative pseudo-label t   beta * BCE(p, t)        beta (p - t)
        other unobserved          -alpha * H(p)           alpha p (1 - p) z

    with ``H(p) = -[p log p + (1 - p) log(1 - p)] = (1 - p) z - log p``,
    whose derivative is ``-p (1 - p) z``; ``BCE(p, t) = (1 - t) z - log p``.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        alpha (float): alpha. Defaults to 0.1.
        beta (float): beta. Defaults to 0.2.
        pseudo_negative (torch.Tensor, optional): 0/1 (or boolean) mask
            (B, C) of the negative pseudo-labels (ignored on observed
            labels). Defaults to None (plain EM).
        soft_label (torch.Tensor, optional): Their soft labels t (B, C).
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    targets = () if pseudo_negative is None else (
        (pseudo_negative, beta, soft_label.to(z.dtype)), )
    value, grad = em_entries(z, s, alpha, targets, n)
    return value.mean(), grad / z.numel()


def em_entries(z: torch.Tensor,
               s: torch.Tensor,
               alpha: float,
               soft_targets: Sequence[tuple] = (),
               n: Optional[torch.Tensor] = None
               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """EM's loss of every entry and its derivative in the entry's logit,
    both (B, C), with pseudo-labels as soft targets: each ``(mask, weight,
    t)`` of ``soft_targets`` puts ``weight * BCE(p, t)`` (derivative
    ``weight (p - t)``) on the unobserved entries of its 0/1 mask, later
    ones over earlier ones. :func:`em_value_and_grad` (one target: APL's
    negatives) and VLPL's loss (its positive and negative pseudo-labels)
    take the mean.
    """
    # entries are chosen with 0/1 weights (torch.lerp is exact at 0 and 1)
    s = s.to(z.dtype)
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    qz = (1 - p) * z  # -H(p) = log p - (1 - p) z
    value = alpha * (log_p - qz)
    grad = torch.mul(p, alpha).mul_(qz)
    for mask, weight, t in soft_targets:
        mask = mask.to(z.dtype)
        value.lerp_(weight * ((1 - t) * z - log_p), mask)
        grad.lerp_(weight * (p - t), mask)
    value.lerp_(-log_p, s)
    grad.lerp_(p - 1, s)
    if n is not None:  # -log(1 - p) = z - log p, whatever the bank holds
        value = torch.where(n, z - log_p, value)
        grad = torch.where(n, p, grad)
    return value, grad


em_loss = differentiable(em_value_and_grad)


@MODELS.register_module()
class EMLoss(nn.Module):
    """EM loss of Zhou et al. (ECCV 2022), with APL's pseudo-labels.

    The loss is :func:`em_value_and_grad` (docs/methods/em_apl.md, EM).

    Without a label bank it is the EM loss. With ``label_bank`` on the head
    and :class:`SPMLPseudoLabelHook` in the config, the head passes the
    batch's bank entries (``pseudo_label``, ``soft_label``) and the negative
    pseudo-labels cost ``beta * BCE(p, t)`` instead of the entropy term
    (EM + APL, paper Eq. 8). An observed negative of partial labels costs
    ``-log(1 - p)``, whatever the bank holds for it.

    Args:
        alpha (float): Weight alpha of the entropy of unobserved entries,
            >= 0. Table 6: VOC 0.2, COCO 0.1, NUS-WIDE 0.1, CUB 0.01.
            Defaults to 0.1.
        beta (float): Weight beta of the negative pseudo-labels, >= 0.
            Table 6: VOC 0.02, COCO 0.9, NUS-WIDE 0.2, CUB 0.4. Defaults to
            0.2.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='EMLoss', alpha=0.2, beta=0.02),
        ...     label_bank=dict(type='LabelBank')))
        >>> custom_hooks = [dict(type='SPMLPseudoLabelHook', warmup_epochs=5)]
    """

    def __init__(self, alpha: float = 0.1, beta: float = 0.2):
        super().__init__()
        for name, value in (('alpha', alpha), ('beta', beta)):
            if not isinstance(value, (int, float)) or not (
                    0 <= value < float('inf')):
                raise ValueError(f'{name} must be a float >= 0, got '
                                 f'{value!r}')
        self.alpha = alpha
        self.beta = beta

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                soft_label: Optional[torch.Tensor] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 0 unlabelled, -1 negative pseudo-label.
            soft_label (torch.Tensor, optional): The bank's soft labels
                (B, C) in [0, 1].
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        negative = None
        if pseudo_label is not None:
            if soft_label is None or pseudo_label.shape != target.shape \
                    or soft_label.shape != target.shape:
                raise ValueError(
                    'pseudo_label and soft_label must both be given with the '
                    f'shape of the logits {tuple(cls_score.shape)}')
            negative = indicator(torch.eq, pseudo_label, PSEUDO_NEGATIVE,
                                 target)
        return em_loss(cls_score, target, self.alpha, self.beta, negative,
                       soft_label, observed_negative)
