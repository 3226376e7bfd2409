from abc import ABCMeta, abstractmethod
from typing import Dict

import torch

from ..label_bank import LabelBank


class BaseLabelUpdater(metaclass=ABCMeta):
    """An update rule of a :class:`LabelBank`, run between epochs.

    :class:`SPMLPseudoLabelHook` scores the whole training set, gathers the
    scores on every rank and calls :meth:`update` with identical arguments
    everywhere, so the rule must be deterministic (no random numbers, no
    per-rank state). Subclasses are registered in ``MODELS`` and named in the
    hook's ``updater`` config.

    On a large training set the hook gathers the scores and calls
    :meth:`update` one block of classes at a time, with the block's columns
    and the bank's block (:meth:`LabelBank.class_block`), so a rule must
    treat each class independently (per-class counts and selections, and
    per-class numbers in the bank's class-wide buffers) and write the bank's
    buffers in place.
    """

    def check_schedule(self, warmup_epochs: int, max_epochs: int) -> None:
        """Raise ``ValueError`` if the rule's own epoch settings cannot run
        in this schedule; called by the hook before training. Does nothing
        by default."""

    @abstractmethod
    def update(self, bank: LabelBank, scores: torch.Tensor,
               observed: torch.Tensor, epoch: int, max_epochs: int,
               warmup_epochs: int) -> Dict[str, float]:
        """Write the bank after epoch ``epoch``.

        Args:
            bank (LabelBank): The bank to update in place.
            scores (torch.Tensor): Probabilities (N, C) of every training
                sample, row ``i`` for ``sample_idx`` i, from the model in
                eval mode.
            observed (torch.Tensor): Observed labels (N, C), boolean.
            epoch (int): The epoch just trained, 1-based.
            max_epochs (int): Epochs of the run (T).
            warmup_epochs (int): The hook's warm-up (T_w); updates run after
                epochs ``T_w .. T - 1``.

        Returns:
            dict: Numbers to log (e.g. how many entries changed).
        """
