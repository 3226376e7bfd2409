from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..label_bank import PSEUDO_NEGATIVE, UNLABELLED
from .utils import check_target


def em_loss(cls_score: torch.Tensor,
            target: torch.Tensor,
            alpha: float = 0.1,
            beta: float = 0.2,
            pseudo_negative: Optional[torch.Tensor] = None,
            soft_label: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Entropy-maximization loss with soft negative pseudo-labels (SPEC 4).

    Per entry: ``-log p`` on an observed positive, ``beta * BCE(p, t)`` on a
    negative pseudo-label with stored soft label ``t`` (paper Eq. 7-8), and
    ``-alpha * H(p)`` on every other unobserved entry, with
    ``H(p) = -[p log p + (1 - p) log(1 - p)]`` (paper Eq. 3-4). All terms
    are written with log-sigmoids of the logits.

    Args:
        cls_score (torch.Tensor): Logits z, shape (B, C).
        target (torch.Tensor): Observed labels s in 0/1, shape (B, C).
        alpha (float): Weight alpha of the entropy term. Defaults to 0.1.
        beta (float): Weight beta of the pseudo-label term. Defaults to 0.2.
        pseudo_negative (torch.Tensor, optional): Boolean mask (B, C) of the
            negative pseudo-labels; ignored on observed positives. Defaults
            to None (plain EM).
        soft_label (torch.Tensor, optional): Soft labels t (B, C), read where
            ``pseudo_negative`` is set.

    Returns:
        torch.Tensor: Mean over B x C.
    """
    z = cls_score.float()
    target = target.float()
    log_p, log_q = F.logsigmoid(z), F.logsigmoid(-z)
    entropy = -(torch.sigmoid(z) * log_p + torch.sigmoid(-z) * log_q)
    loss = target * -log_p + (1 - target) * -alpha * entropy
    if pseudo_negative is not None:
        negative = pseudo_negative & (target == 0)
        bce = F.binary_cross_entropy_with_logits(
            z, soft_label.float(), reduction='none')
        loss = torch.where(negative, beta * bce, loss)
    return loss.mean()


@MODELS.register_module()
class EMLoss(nn.Module):
    """EM loss of Zhou et al. (ECCV 2022), with APL's pseudo-labels (SPEC 4).

    Without a label bank it is the EM loss. With ``label_bank`` on the head
    and :class:`SPMLPseudoLabelHook` in the config, the head passes the
    batch's bank entries (``pseudo_label``, ``soft_label``) and the negative
    pseudo-labels cost ``beta * BCE(p, t)`` instead of the entropy term
    (EM + APL, paper Eq. 8).

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
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f'{name} must be a float >= 0, got '
                                 f'{value!r}')
        self.alpha = alpha
        self.beta = beta

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                soft_label: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed labels in 0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 0 unlabelled, -1 negative pseudo-label.
            soft_label (torch.Tensor, optional): The bank's soft labels
                (B, C) in [0, 1].
        """
        check_target(cls_score, target)
        negative = None
        if pseudo_label is not None:
            if soft_label is None or pseudo_label.shape != target.shape \
                    or soft_label.shape != target.shape:
                raise ValueError(
                    'pseudo_label and soft_label must both be given with the '
                    f'shape of the logits {tuple(cls_score.shape)}')
            if not ((pseudo_label == UNLABELLED) |
                    (pseudo_label == PSEUDO_NEGATIVE)).all():
                raise ValueError(
                    'EMLoss reads negative pseudo-labels (-1) only; the label '
                    'bank holds other states (positive pseudo-labels come '
                    'from label correction, which EMLoss does not model).')
            negative = pseudo_label == PSEUDO_NEGATIVE
        return em_loss(cls_score, target, self.alpha, self.beta, negative,
                       soft_label)
