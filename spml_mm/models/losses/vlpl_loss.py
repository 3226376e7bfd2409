from typing import Optional, Tuple

import torch
from mmpretrain.registry import MODELS

from .base import PseudoLabelLoss
from .em_loss import em_entries
from .value_and_grad import differentiable


def vlpl_value_and_grad(z: torch.Tensor,
                        s: torch.Tensor,
                        positive: torch.Tensor,
                        negative: torch.Tensor,
                        alpha: float = 0.2,
                        beta_pos: float = 0.7,
                        beta_neg: float = 0.,
                        rho: float = 0.9,
                        n: Optional[torch.Tensor] = None
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """VLPL's loss: EM with a teacher's pseudo-labels (Xing et al. 2024).

    Per entry, mean over B x C, with ``BCE(p, t) = -t log p - (1 - t)
    log(1 - p) = (1 - t) z - log p``, whose derivative is ``p - t``::

        observed positive         -log p                  dL/dz = p - 1
        observed negative         -log(1 - p)             p
        positive pseudo-label     beta_pos BCE(p, rho)    beta_pos (p - rho)
        negative pseudo-label     beta_neg BCE(p, 1 - rho)
                                                  beta_neg (p - 1 + rho)
        other unobserved          -alpha H(p)             alpha p (1 - p) z

    with ``H(p) = (1 - p) z - log p`` the entropy (EM's term,
    :func:`~spml_mm.models.losses.em_loss.em_value_and_grad`).

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        positive (torch.Tensor): 0/1 (or boolean) mask (B, C) of the
            positive pseudo-labels (ignored on observed labels).
        negative (torch.Tensor): 0/1 (or boolean) mask (B, C) of the
            negative pseudo-labels (ignored on observed labels).
        alpha (float): alpha. Defaults to 0.2.
        beta_pos (float): beta_pos. Defaults to 0.7.
        beta_neg (float): beta_neg. Defaults to 0.
        rho (float): rho. Defaults to 0.9.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    value, grad = em_entries(z, s, alpha, ((negative, beta_neg, 1 - rho),
                                           (positive, beta_pos, rho)), n)
    return value.mean(), grad / z.numel()


vlpl_loss = differentiable(vlpl_value_and_grad)


@MODELS.register_module()
class VLPLLoss(PseudoLabelLoss):
    """VLPL's loss (Xing et al., CVPR Workshops 2024): EM on the observed
    labels, with a teacher's pseudo-labels as weighted soft targets.

    The loss is :func:`vlpl_value_and_grad`
    (docs/methods/teacher_pseudo_labels.md). The pseudo-labels come from the
    head's label bank (``pseudo_label`` of each batch, e.g.
    :class:`TeacherLabelBank`); without one the loss is EM. Defaults are the
    release's VOC setting.

    Args:
        alpha (float): alpha, weight of the entropy of unobserved entries
            without a pseudo-label, >= 0. Defaults to 0.2 (VOC); COCO and
            NUS-WIDE 0.1, CUB 0.01.
        pseudo_positive_weight (float): beta_pos, the weight of a positive
            pseudo-label, >= 0. Defaults to 0.7.
        pseudo_negative_weight (float): beta_neg, the weight of a negative
            pseudo-label, >= 0. Defaults to 0 (the ResNet-50 release makes
            no negative pseudo-labels).
        pseudo_positive_target (float): rho, the soft target of a positive
            pseudo-label (1 - rho that of a negative one), in [0, 1].
            Defaults to 0.9.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='VLPLLoss', alpha=0.2),
        ...     label_bank=dict(type='TeacherLabelBank',
        ...                     score_file='data/voc/teacher_clip.npz',
        ...                     threshold=0.3)))
        >>> default_hooks = dict(
        ...     teacher_scores=dict(type='SPMLTeacherScoreHook'))
    """

    def __init__(self,
                 alpha: float = 0.2,
                 pseudo_positive_weight: float = 0.7,
                 pseudo_negative_weight: float = 0.,
                 pseudo_positive_target: float = 0.9):
        super().__init__()
        for name, value in (('alpha', alpha),
                            ('pseudo_positive_weight', pseudo_positive_weight),
                            ('pseudo_negative_weight',
                             pseudo_negative_weight)):
            if not isinstance(value, (int, float)) or not (
                    0 <= value < float('inf')):
                raise ValueError(f'{name} must be a float >= 0, got '
                                 f'{value!r}')
        if not (isinstance(pseudo_positive_target, (int, float))
                and 0 <= pseudo_positive_target <= 1):
            raise ValueError('pseudo_positive_target (rho) must be in [0, 1]'
                             f', got {pseudo_positive_target!r}')
        self.alpha = float(alpha)
        self.pseudo_positive_weight = float(pseudo_positive_weight)
        self.pseudo_negative_weight = float(pseudo_negative_weight)
        self.pseudo_positive_target = float(pseudo_positive_target)

    def pseudo_label_loss(self, z: torch.Tensor, s: torch.Tensor,
                          positive: torch.Tensor, negative: torch.Tensor,
                          n: Optional[torch.Tensor]) -> torch.Tensor:
        return vlpl_loss(z, s, positive, negative, self.alpha,
                         self.pseudo_positive_weight,
                         self.pseudo_negative_weight,
                         self.pseudo_positive_target, n)
