import math
from fractions import Fraction
from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..epoch_scheduled import EpochScheduled
from ..label_states import PSEUDO_POSITIVE
from .value_and_grad import differentiable

#: The paper's three ways of modifying the large losses.
SCHEMES = ('LL-R', 'LL-Ct', 'LL-Cp')


def num_large_losses(batch: int, classes: int, epoch: int,
                     rate: float) -> int:
    """``k = ceil(B C (e - 1) delta)``, the entries modified in a batch of
    epoch ``e`` (1-based) at the rate ``delta`` per epoch.

    The product is exact (``delta`` read as the decimal the config writes),
    so e.g. 0.5 % at epoch 6 over 40 entries gives 1, not 2.
    """
    exact = Fraction(batch * classes * (epoch - 1)) * Fraction(repr(rate))
    return min(math.ceil(exact), batch * classes)


def large_loss_selection(z: torch.Tensor,
                         s: torch.Tensor,
                         k: int,
                         n: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The unobserved entries whose assumed-negative loss is among the ``k``
    largest of the batch.

    The AN loss of an unobserved entry, ``softplus(z)``, grows with ``z``, so
    the entries are those unobserved with ``z`` at or above the k-th largest
    unobserved logit (one ``kthvalue`` over the flattened batch; ties at the
    k-th value are all selected). Observed negatives are never selected.

    Args:
        z (torch.Tensor): Logits, shape (B, C).
        s (torch.Tensor): Observed positives (B, C), 0/1 or boolean.
        k (int): How many, >= 0.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        torch.Tensor: Boolean mask (B, C).
    """
    unobserved = s == 0
    if n is not None:
        unobserved &= ~n
    if k <= 0:
        return torch.zeros_like(unobserved)
    candidates = z.detach().masked_fill(~unobserved, -math.inf).flatten()
    k = min(k, candidates.numel())
    threshold = candidates.kthvalue(candidates.numel() - k + 1).values
    return unobserved & (z >= threshold)


def ll_value_and_grad(z: torch.Tensor, s: torch.Tensor,
                      selected: torch.Tensor,
                      correct: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """AN with its largest unobserved losses rejected or corrected (Kim et
    al. 2022, Eq. 3-5).

    Per entry, mean over all B x C entries (the rejected ones included)::

        observed positive, or selected and correct   -log p     p - 1
        selected and not correct (rejected)          0          0
        observed negative, other unobserved          -log(1-p)  p

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        selected (torch.Tensor): Boolean mask (B, C) of the modified
            unobserved entries (:func:`large_loss_selection`).
        correct (bool): True corrects them to positives (LL-Ct, LL-Cp),
            False rejects them (LL-R).

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    positive = (s > 0) | selected if correct else s > 0
    p = torch.sigmoid(z)
    # -log p = softplus(-z), -log(1 - p) = softplus(z)
    value = torch.where(positive, F.softplus(-z), F.softplus(z))
    grad = torch.where(positive, p - 1, p)
    if not correct:
        value = value.masked_fill(selected, 0.)
        grad = grad.masked_fill(selected, 0.)
    return value.mean(), grad.div_(z.numel())


ll_loss = differentiable(ll_value_and_grad)


@MODELS.register_module()
class LLLoss(nn.Module, EpochScheduled):
    """Large loss rejection and correction of Kim et al. (CVPR 2022).

    The loss is :func:`ll_value_and_grad` (docs/methods/large_loss.md, LL-R, LL-Ct,
    LL-Cp): AN's BCE, with the largest losses among the unobserved entries
    of each batch rejected (``'LL-R'``) or taken as positives (``'LL-Ct'``,
    ``'LL-Cp'``).

    ``'LL-R'`` and ``'LL-Ct'`` modify ``k = ceil(B C (e - 1) delta)`` entries
    in epoch ``e`` (1-based): epoch 1 is plain AN. ``'LL-Cp'`` corrects
    ``k = ceil(B C delta)`` entries per batch from epoch 2 on, permanently:
    they are positives in every later epoch. It needs the per-sample state
    ``label_bank=dict(type='CorrectedLabelBank')`` on the head and
    :class:`SPMLSampleStateHook` (which sizes it and merges the ranks' rows
    after each epoch). The epoch comes from :class:`SPMLEpochHook`.

    Args:
        scheme (str): ``'LL-R'``, ``'LL-Ct'`` or ``'LL-Cp'``.
        rate (float): delta (the paper's Delta_rel, given there in percent)
            as a fraction per epoch in [0, 1], e.g. 0.002 for 0.2 %. The
            authors' values (LL-R / LL-Ct / LL-Cp, percent): VOC 0.2 / 0.2 /
            0.1, COCO 0.4 / 0.2 / 0.2, NUS-WIDE 0.4 / 0.2 / 0.2, CUB 0.4 /
            0.4 / 0.2.

    Example:
        >>> # LL-Cp on COCO
        >>> head = dict(type='SPMLLinearClsHead', num_classes=80,
        ...             in_channels=2048,
        ...             loss=dict(type='LLLoss', scheme='LL-Cp', rate=0.002),
        ...             label_bank=dict(type='CorrectedLabelBank'))
        >>> default_hooks = dict(
        ...     epoch_schedule=dict(type='SPMLEpochHook'),
        ...     sample_state=dict(type='SPMLSampleStateHook'))
    """

    def __init__(self, scheme: str, rate: float):
        super().__init__()
        if scheme not in SCHEMES:
            raise ValueError(f'scheme must be one of {SCHEMES}, got '
                             f'{scheme!r}')
        if not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError('rate (delta) must be a fraction in [0, 1] '
                             f'(0.002 for 0.2 %), got {rate!r}')
        self.scheme = scheme
        self.rate = rate
        self.epoch: Optional[int] = None

    def set_epoch(self, epoch: int, max_epochs: int) -> Dict[str, float]:
        """Enter training epoch ``epoch`` (0-based, as the runner counts)."""
        self.epoch = epoch + 1
        rate = self.rate if self.scheme == 'LL-Cp' else self.rate * epoch
        return dict(ll_rate=rate if self.epoch > 1 else 0.)

    def num_modified(self, batch: int, classes: int) -> int:
        """k of a (batch, classes) batch in the current epoch."""
        if self.epoch is None:
            raise RuntimeError(
                'LLLoss has no epoch: add default_hooks.epoch_schedule='
                "dict(type='SPMLEpochHook'), which sets it before every "
                'training epoch.')
        if self.scheme == 'LL-Cp':
            return num_large_losses(batch, classes, 2, self.rate) \
                if self.epoch > 1 else 0
        return num_large_losses(batch, classes, self.epoch, self.rate)

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                write_corrections: Optional[Callable] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): LL-Cp: the batch's
                permanent corrections from the label bank (B, C), 1 where an
                earlier epoch corrected the entry.
            write_corrections (Callable, optional): LL-Cp: the bank's writer
                of this batch's new corrections (a (B, C) boolean mask).
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels), never rejected or
                corrected. Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        if self.scheme == 'LL-Cp':
            if pseudo_label is None or write_corrections is None:
                raise ValueError(
                    "LLLoss(scheme='LL-Cp') keeps its corrections per "
                    "sample: use head type='SPMLLinearClsHead' with "
                    "label_bank=dict(type='CorrectedLabelBank')")
            corrected = (pseudo_label == PSEUDO_POSITIVE) & (target == 0)
            if observed_negative is not None:
                corrected &= ~observed_negative
            target = target.masked_fill(corrected, 1)
        k = self.num_modified(*cls_score.shape)
        selected = large_loss_selection(cls_score, target, k,
                                        observed_negative)
        if self.scheme == 'LL-Cp' and k:
            write_corrections(selected)
        return ll_loss(cls_score, target.to(cls_score.dtype), selected,
                       self.scheme != 'LL-R')
