from typing import Dict

import torch
from mmpretrain.registry import MODELS

from ...label_states import PSEUDO_NEGATIVE, UNLABELLED
from ..label_bank import LabelBank
from .base_label_updater import BaseLabelUpdater
from .selection import count_per_class, lowest_per_class


@MODELS.register_module()
class AsymmetricPseudoLabeling(BaseLabelUpdater):
    """APL's negative pseudo-labeling of Zhou et al. (ECCV 2022, Sec. 3.3).

    After each epoch from the warm-up on, for every class c, the
    ``int(theta * U_c / (T - T_w))`` lowest-scoring entries among those
    still unlabelled become negative pseudo-labels, with their score as a
    fixed soft label; ``U_c`` is the number of entries of class c that are
    not observed positives. Pseudo-labels accumulate; observed positives and
    labelled entries are never selected; no positive pseudo-labels are made.

    Args:
        negative_proportion (float): theta, the share of each class's
            unobserved entries labelled negative over the run, in (0, 1].
            Defaults to 0.9.

    Example:
        >>> custom_hooks = [dict(
        ...     type='SPMLPseudoLabelHook', warmup_epochs=5,
        ...     updater=dict(type='AsymmetricPseudoLabeling',
        ...                  negative_proportion=0.9))]
    """

    def __init__(self, negative_proportion: float = 0.9):
        if not isinstance(negative_proportion, (int, float)) or not (
                0 < negative_proportion <= 1):
            raise ValueError('negative_proportion (theta) must be in (0, 1], '
                             f'got {negative_proportion!r}')
        self.negative_proportion = negative_proportion

    def num_per_epoch(self, observed: torch.Tensor,
                      num_rounds: int) -> torch.Tensor:
        """``int(theta * U_c / num_rounds)`` per class, as in the release."""
        unannotated = (observed.size(0) - count_per_class(observed)).double()
        return (self.negative_proportion * unannotated / num_rounds).long()

    def update(self, bank: LabelBank, scores: torch.Tensor,
               observed: torch.Tensor, epoch: int, max_epochs: int,
               warmup_epochs: int) -> Dict[str, float]:
        device = bank.pseudo_label.device
        scores, observed = scores.to(device), observed.to(device)
        num = self.num_per_epoch(observed, max_epochs - warmup_epochs)
        chosen = lowest_per_class(
            scores, ~observed & (bank.pseudo_label == UNLABELLED), num)
        bank.pseudo_label.masked_fill_(chosen, PSEUDO_NEGATIVE)
        torch.where(chosen, scores, bank.soft_label, out=bank.soft_label)
        return dict(new_negatives=int(count_per_class(chosen).sum()))
