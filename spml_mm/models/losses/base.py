from abc import ABCMeta, abstractmethod
from typing import Optional, Tuple

import torch
import torch.nn as nn

from ..label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE
from .value_and_grad import indicator


class BaseSPMLLoss(nn.Module, metaclass=ABCMeta):
    """Base of the SPML losses that read the observed labels alone.

    :meth:`forward` is the call of MMPretrain's multi-label heads; a
    subclass writes its loss of the logits ``z``, the observed positives
    ``s`` and the observed negatives ``n`` in :meth:`spml_loss`. The losses
    that read a teacher bank's pseudo-labels too are
    :class:`PseudoLabelLoss`; those that read other entries of a label bank
    (EM, OPML, ROLE, LL) have a ``forward`` of their own that names them.
    """

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        return self.spml_loss(cls_score, target, observed_negative)

    @abstractmethod
    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        """The loss of logits ``z`` (B, C), observed positives ``s`` in 0/1
        (B, C) and observed negatives ``n``, a boolean (B, C) mask or
        None."""


def pseudo_label_indicators(pseudo_label: Optional[torch.Tensor],
                            target: torch.Tensor
                            ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Indicators (B, C) of a label bank's positive and negative
    pseudo-labels (its states: 1, -1; 0 none; None: no bank), in the dtype
    of ``target``."""
    if pseudo_label is None:
        zeros = torch.zeros_like(target)
        return zeros, zeros
    if pseudo_label.shape != target.shape:
        raise ValueError(f'pseudo_label of shape {tuple(pseudo_label.shape)} '
                         f'for logits of shape {tuple(target.shape)}')
    return (indicator(torch.eq, pseudo_label, PSEUDO_POSITIVE, target),
            indicator(torch.eq, pseudo_label, PSEUDO_NEGATIVE, target))


class PseudoLabelLoss(nn.Module, metaclass=ABCMeta):
    """Base of the losses that read a teacher bank's pseudo-labels (VLPL,
    GPR): :meth:`forward` is the heads' call with the bank's
    ``pseudo_label``, and a subclass writes its loss of the logits, the
    observed labels and the pseudo-labels' indicators in
    :meth:`pseudo_label_loss`.
    """

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 1 positive, -1 negative pseudo-label, 0 none.
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads; not used.
        """
        positive, negative = pseudo_label_indicators(pseudo_label, target)
        return self.pseudo_label_loss(cls_score, target, positive, negative,
                                      observed_negative)

    @abstractmethod
    def pseudo_label_loss(self, z: torch.Tensor, s: torch.Tensor,
                          positive: torch.Tensor, negative: torch.Tensor,
                          n: Optional[torch.Tensor]) -> torch.Tensor:
        """The loss of logits ``z`` (B, C), observed positives ``s`` in 0/1,
        the 0/1 indicators (B, C) of the positive and the negative
        pseudo-labels (0 everywhere without a bank) and observed negatives
        ``n`` (a boolean mask or None)."""
