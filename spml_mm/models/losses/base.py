from abc import ABCMeta, abstractmethod
from typing import Optional

import torch
import torch.nn as nn


class BaseSPMLLoss(nn.Module, metaclass=ABCMeta):
    """Base of the SPML losses that read the observed labels alone.

    :meth:`forward` is the call of MMPretrain's multi-label heads; a
    subclass writes its loss of the logits ``z``, the observed positives
    ``s`` and the observed negatives ``n`` in :meth:`spml_loss`. The losses
    that read a label bank's entries too (EM, OPML, ROLE, LL) have a
    ``forward`` of their own that names them.
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
