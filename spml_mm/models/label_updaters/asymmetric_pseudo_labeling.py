from typing import Dict, Tuple

import torch
from mmpretrain.registry import MODELS

from ..label_bank import PSEUDO_NEGATIVE, UNLABELLED, LabelBank
from .base_label_updater import BaseLabelUpdater


def select_pseudo_negatives(
        scores: torch.Tensor, observed: torch.Tensor,
        pseudo_label: torch.Tensor,
        num_per_class: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Per class, the lowest-scoring entries that carry no label yet.

    One ``topk`` over the columns of the (N, C) matrix: class ``c`` gets the
    ``num_per_class[c]`` lowest scores among its entries that are neither
    observed positives nor already pseudo-labelled (fewer when fewer are
    left).

    Args:
        scores (torch.Tensor): Probabilities (N, C).
        observed (torch.Tensor): Observed positives (N, C), boolean.
        pseudo_label (torch.Tensor): Bank states (N, C).
        num_per_class (torch.Tensor): How many to select per class (C,).

    Returns:
        tuple: Row and column indices of the selected entries.
    """
    k = min(int(num_per_class.max()), scores.size(0))
    if k <= 0:
        empty = scores.new_zeros(0, dtype=torch.long)
        return empty, empty
    # probabilities are finite: inf marks the entries that cannot be chosen
    blocked = observed | (pseudo_label != UNLABELLED)
    values, rows = scores.masked_fill(blocked, float('inf')).topk(
        k, dim=0, largest=False, sorted=True)
    rank = torch.arange(k, device=scores.device)[:, None]
    take = (rank < num_per_class.to(scores.device)) & (values != float('inf'))
    cols = torch.arange(scores.size(1), device=scores.device).expand_as(rows)
    return rows[take], cols[take]


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
        unannotated = (observed.size(0) - observed.sum(0)).double()
        return (self.negative_proportion * unannotated / num_rounds).long()

    def update(self, bank: LabelBank, scores: torch.Tensor,
               observed: torch.Tensor, epoch: int, max_epochs: int,
               warmup_epochs: int) -> Dict[str, float]:
        device = bank.pseudo_label.device
        scores, observed = scores.to(device), observed.to(device)
        num = self.num_per_epoch(observed, max_epochs - warmup_epochs)
        rows, cols = select_pseudo_negatives(scores, observed,
                                             bank.pseudo_label, num)
        bank.pseudo_label[rows, cols] = PSEUDO_NEGATIVE
        bank.soft_label[rows, cols] = scores[rows, cols]
        return dict(new_negatives=len(rows))
