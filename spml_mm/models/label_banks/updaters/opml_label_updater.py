from typing import Dict

import numpy as np
import torch
from mmpretrain.registry import MODELS

from spml_mm.utils.average_precision import average_precision_per_class
from ...label_states import PSEUDO_POSITIVE
from ..label_bank import LabelBank
from ..opml_label_bank import OPMLLabelBank
from .base_label_updater import BaseLabelUpdater
from .selection import count_per_class, lowest_per_class


def num_corrections(observed: torch.Tensor, class_ap: torch.Tensor,
                    zeta: float) -> torch.Tensor:
    """``floor(zeta * N_k * (1 - AP_k))`` per class (docs/methods/opml.md).

    Args:
        observed (torch.Tensor): Observed labels (N, C), boolean.
        class_ap (torch.Tensor): AP per class (C,) in [0, 1].
        zeta (float): Correction proportion zeta in [0, 1].

    Returns:
        torch.Tensor: How many entries to correct per class (C,), long, on
        the CPU.
    """
    num_observed = count_per_class(observed).double().cpu()
    share = zeta * num_observed * (1 - class_ap.double().cpu())
    return share.floor().long()


@MODELS.register_module()
class OPMLLabelUpdater(BaseLabelUpdater):
    """OPML's per-class AP and AP-based label correction.

    Run by :class:`SPMLPseudoLabelHook` on the training set's scores at the
    end of every epoch from ``warmup_epochs`` on (OPML configs use 1):

    1. ``AP_k``, the average precision of class k's scores against the
       observed labels (scikit-learn's definition, 0 for a class without an
       observed positive), is stored in the bank's ``class_ap``; the soft
       labels ``p * AP_k^gamma`` of :class:`OPMLLoss` read it in the next
       epoch.
    2. From epoch ``correction_start_epoch`` on, for each class k, the
       ``floor(zeta * N_k * (1 - AP_k))`` highest-scoring unobserved entries
       become positives (N_k: observed positives of class k). Corrections
       persist: an entry corrected once stays a positive for the rest of the
       run, and the bank carries it through checkpoints and ``--resume``.

    The method is defined in docs/methods/opml.md (OPML). Where the paper leaves
    room, the choices are: the candidates of each epoch are all
    unobserved entries, those corrected before included, so the count is
    the size of the class's corrected set that this epoch's scores support
    rather than a number added every epoch (it cannot compound over a long
    schedule); the AP is measured against the observed labels only, as that
    definition says, not against earlier corrections; of entries tied in
    score where not all can be corrected, those with the lowest
    ``sample_idx`` are (the same on every rank).

    Args:
        zeta (float): Correction proportion zeta in [0, 1]; 0 turns the
            correction off and keeps only the AP for the soft labels.
            Defaults to 0.5.
        correction_start_epoch (int): The first epoch (1-based) after which
            labels are corrected; the corrected labels train from the next
            epoch on. Must lie in ``[warmup_epochs, max_epochs - 1]`` of the
            hook and the schedule (no update follows the last epoch).
            Defaults to 1.

    Example:
        >>> custom_hooks = [dict(
        ...     type='SPMLPseudoLabelHook', warmup_epochs=1,
        ...     updater=dict(type='OPMLLabelUpdater', zeta=0.5,
        ...                  correction_start_epoch=2))]
    """

    def __init__(self, zeta: float = 0.5, correction_start_epoch: int = 1):
        if not isinstance(zeta, (int, float)) or not 0 <= zeta <= 1:
            raise ValueError(f'zeta must be in [0, 1], got {zeta!r}')
        if not isinstance(correction_start_epoch,
                          int) or correction_start_epoch < 1:
            raise ValueError('correction_start_epoch must be an int >= 1, '
                             f'got {correction_start_epoch!r}')
        self.zeta = zeta
        self.correction_start_epoch = correction_start_epoch

    def check_schedule(self, warmup_epochs: int, max_epochs: int) -> None:
        if self.zeta > 0 and not (warmup_epochs <= self.correction_start_epoch
                                  < max_epochs):
            raise ValueError(
                f'correction_start_epoch={self.correction_start_epoch} must '
                f'be in [warmup_epochs={warmup_epochs}, max_epochs - 1='
                f'{max_epochs - 1}]: the hook updates the bank after epochs '
                f'{warmup_epochs}..{max_epochs - 1} only, so a later start '
                'never corrects a label (set zeta=0 to turn the correction '
                'off).')

    def update(self, bank: LabelBank, scores: torch.Tensor,
               observed: torch.Tensor, epoch: int, max_epochs: int,
               warmup_epochs: int) -> Dict[str, float]:
        if not isinstance(bank, OPMLLabelBank):
            raise ValueError(
                'OPMLLabelUpdater writes an OPMLLabelBank; set '
                "model.head.label_bank=dict(type='OPMLLabelBank'), got "
                f'{type(bank).__name__}')
        # a class without an observed positive has no AP: it counts 0
        ap = np.nan_to_num(average_precision_per_class(
            scores.float().cpu().numpy(), observed.cpu().numpy()) / 100)
        class_ap = torch.from_numpy(ap).float()
        bank.class_ap.copy_(class_ap)
        stats = dict(mean_train_ap=100 * float(class_ap.mean()))
        if self.zeta == 0 or epoch < self.correction_start_epoch:
            return stats
        device = bank.pseudo_label.device
        scores, observed = scores.to(device), observed.to(device)
        num = num_corrections(observed, class_ap, self.zeta)
        # the highest scores among all unobserved entries: the lowest of the
        # negated scores, with no entry excluded for an earlier correction
        chosen = lowest_per_class(-scores, ~observed, num)
        stats['new_positives'] = int(
            count_per_class(chosen
                            & (bank.pseudo_label != PSEUDO_POSITIVE)).sum())
        bank.pseudo_label.masked_fill_(chosen, PSEUDO_POSITIVE)
        return stats
