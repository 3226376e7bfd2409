import math
from typing import Optional

import torch
import torch.nn as nn
from mmpretrain.registry import MODELS

from ..label_bank import PSEUDO_POSITIVE, UNLABELLED
from .utils import check_target


def _log_weighted_sum_exp(log_offset: float, weight: torch.Tensor,
                          exponent: torch.Tensor) -> torch.Tensor:
    """``log(exp(log_offset) + sum_k weight_k * exp(exponent_k))`` per row.

    One logsumexp over ``[log_offset, log(weight) + exponent]``; entries of
    weight 0 become ``-inf`` and drop out of the sum and of the gradient.
    """
    offset = exponent.new_full((exponent.size(0), 1), log_offset)
    terms = torch.log(weight) + exponent
    return torch.logsumexp(torch.cat([offset, terms], dim=1), dim=1)


def opml_loss(cls_score: torch.Tensor,
              label: torch.Tensor,
              alpha: float = 1.,
              beta: float = 1.) -> torch.Tensor:
    """One-pair multi-label loss, OPML (SPEC 6), with hard or soft labels.

    Per row, ``log(alpha + sum_k (1 - y_k) e^{z_k}) + log(beta + sum_k y_k
    e^{-z_k})``. With 0/1 labels this is the paper's full-label form
    ``log(alpha + sum_{j in N} e^{z_j}) + log(beta + sum_{i in P}
    e^{-z_i})``, and its single-positive form when a row has one positive
    (the unobserved entries are then the set N). Soft labels y in [0, 1]
    weigh an entry into both sums. ``alpha = beta = 1`` is the ZLPR loss.
    Both logarithms are computed as a logsumexp over ``log(alpha)`` and
    ``log(w_k) + z_k``, so any logit is finite.

    Args:
        cls_score (torch.Tensor): Logits z, shape (B, C).
        label (torch.Tensor): Labels y in [0, 1], shape (B, C): the observed
            0/1 matrix, full labels, or soft labels.
        alpha (float): Offset alpha > 0 of the negative sum. Defaults to 1.
        beta (float): Offset beta > 0 of the positive sum. Defaults to 1.

    Returns:
        torch.Tensor: Mean over the batch.
    """
    z = cls_score.float()
    y = label.float()
    negative = _log_weighted_sum_exp(math.log(alpha), 1 - y, z)
    positive = _log_weighted_sum_exp(math.log(beta), y, -z)
    return (negative + positive).mean()


def high_rank_penalty(probs: torch.Tensor, delta: float) -> torch.Tensor:
    """``-sum_i log(sigma_i(F)^2 + delta)`` over the singular values of F.

    The unweighted high-rank regularization of OPML (SPEC 6): the sum runs
    over the ``min(B, C)`` singular values of the batch probability matrix
    F, so it serves batches smaller and larger than the number of classes.
    The singular values come from ``torch.linalg.svdvals`` in float32, whose
    backward ``U diag(g) V^T`` needs no gaps between singular values, so
    repeated or zero singular values (identical rows) keep a finite
    gradient.

    Args:
        probs (torch.Tensor): Probabilities F, shape (B, C).
        delta (float): delta > 0 inside the logarithm.

    Returns:
        torch.Tensor: The penalty, a scalar.
    """
    sigma = torch.linalg.svdvals(probs.float())
    return -torch.log(sigma.square() + delta).sum()


@MODELS.register_module()
class OPMLLoss(nn.Module):
    """One-pair multi-label loss with OPML's extensions (SPEC 6).

    ``a`` and ``b`` set the offsets ``alpha = a / (1 - a)`` and ``beta =
    b / (1 - b)`` of :func:`opml_loss`; ``a = b = 0.5`` is ZLPR. The same
    module trains on single positives (the observed matrix) and on full
    labels (``train_dataloader.dataset.full_labels=True``), the paper's two
    settings, since the full-label form with one positive per row is the
    single-positive form.

    Extensions, each off by default:

    - High-rank regularization ``R = -lambda * sum_i log(sigma_i(F)^2 +
      delta)`` on the batch probability matrix ``F = sigmoid(z)``, added to
      the loss when ``rank_weight > 0``. Under distributed training F is each
      rank's own batch.
    - Soft labels (``soft_labels=True``): an unobserved entry takes
      ``y_nk = p_nk * AP_k^gamma``, p the detached probability of the
      current forward pass and ``AP_k`` the class's AP of the training-set
      scores against the observed labels at the last epoch end. The AP comes
      from :class:`OPMLLabelBank` (``class_ap``), filled by
      :class:`SPMLPseudoLabelHook` with the :class:`OPMLLabelUpdater`. Until
      the first epoch end has scored the training set the bank holds no AP
      (``-1``) and unobserved entries keep ``y = 0``: the first epoch trains
      plain OPML.
    - Label correction: entries the bank marks as positive pseudo-labels
      (``pseudo_label == 1``, :class:`OPMLLabelUpdater`) count as positives,
      ``y = 1``, like the observed positive.

    Args:
        a (float): a in (0, 1), giving alpha = a / (1 - a). Defaults to 0.5.
        b (float): b in (0, 1), giving beta = b / (1 - b). Defaults to 0.5.
        rank_weight (float): lambda >= 0 of the high-rank regularization;
            0 turns it off. Defaults to 0.
        rank_delta (float): delta > 0 of the high-rank regularization.
            Defaults to 1e-2.
        soft_labels (bool): Give unobserved entries the soft labels
            ``p * AP_k^gamma``; needs the head's
            ``label_bank=dict(type='OPMLLabelBank')``. Defaults to False.
        gamma (float): Exponent gamma >= 0 of ``AP_k`` in the soft labels.
            Defaults to 1.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='OPMLLoss', a=0.5, b=0.5, rank_weight=1e-3,
        ...               soft_labels=True, gamma=1.),
        ...     label_bank=dict(type='OPMLLabelBank')))
        >>> custom_hooks = [dict(
        ...     type='SPMLPseudoLabelHook',
        ...     updater=dict(type='OPMLLabelUpdater', zeta=0.5,
        ...                  correction_start_epoch=2))]
    """

    def __init__(self,
                 a: float = 0.5,
                 b: float = 0.5,
                 rank_weight: float = 0.,
                 rank_delta: float = 1e-2,
                 soft_labels: bool = False,
                 gamma: float = 1.):
        super().__init__()
        for name, value in (('a', a), ('b', b)):
            if not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ValueError(f'{name} must be in (0, 1) (exclusive), got '
                                 f'{value!r}')
        if not isinstance(rank_weight, (int, float)) or rank_weight < 0:
            raise ValueError('rank_weight (lambda) must be >= 0, got '
                             f'{rank_weight!r}')
        if not isinstance(rank_delta, (int, float)) or rank_delta <= 0:
            raise ValueError('rank_delta (delta) must be > 0, got '
                             f'{rank_delta!r}')
        if not isinstance(gamma, (int, float)) or gamma < 0:
            raise ValueError(f'gamma must be >= 0, got {gamma!r}')
        self.a = a
        self.b = b
        self.alpha = a / (1 - a)
        self.beta = b / (1 - b)
        self.rank_weight = rank_weight
        self.rank_delta = rank_delta
        self.soft_labels = soft_labels
        self.gamma = gamma

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                class_ap: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed (or full) labels in 0/1, shape
                (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 0 unlabelled, 1 corrected to positive.
            class_ap (torch.Tensor, optional): The bank's per-class AP (C,)
                in [0, 1], or -1 before the first epoch end.
        """
        check_target(cls_score, target)
        label = target.float()
        if pseudo_label is not None:
            if pseudo_label.shape != target.shape:
                raise ValueError(
                    f'pseudo_label must have the shape of the logits '
                    f'{tuple(cls_score.shape)}, got {tuple(pseudo_label.shape)}')
            if not ((pseudo_label == UNLABELLED) |
                    (pseudo_label == PSEUDO_POSITIVE)).all():
                raise ValueError(
                    'OPMLLoss reads positive pseudo-labels (1) only; the label '
                    'bank holds negative ones, which OPML does not make.')
            label = label.maximum((pseudo_label == PSEUDO_POSITIVE).float())
        if self.soft_labels:
            if class_ap is None:
                raise ValueError(
                    'OPMLLoss(soft_labels=True) needs the per-class AP of '
                    'the training set: set the head\'s label_bank='
                    "dict(type='OPMLLabelBank') and add SPMLPseudoLabelHook "
                    "with updater=dict(type='OPMLLabelUpdater').")
            ap = class_ap.float().to(cls_score.device)
            weight = torch.where(ap < 0, torch.zeros_like(ap),
                                 ap.clamp(max=1).pow(self.gamma))
            soft = torch.sigmoid(cls_score.detach().float()) * weight
            label = torch.where(label > 0, label, soft)
        loss = opml_loss(cls_score, label, self.alpha, self.beta)
        if self.rank_weight > 0:
            probs = torch.sigmoid(cls_score.float())
            loss = loss + self.rank_weight * high_rank_penalty(
                probs, self.rank_delta)
        return loss

    def extra_repr(self) -> str:
        return (f'a={self.a}, b={self.b}, rank_weight={self.rank_weight}, '
                f'rank_delta={self.rank_delta}, soft_labels='
                f'{self.soft_labels}, gamma={self.gamma}')
