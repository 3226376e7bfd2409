import functools
from typing import Dict, Optional

import torch
from mmengine import dist
from mmpretrain.registry import MODELS

from ..label_states import PSEUDO_POSITIVE
from .label_bank import LabelBank
from .storage import decode_states, encode_states


@MODELS.register_module()
class CorrectedLabelBank(LabelBank):
    """Permanent label corrections made by the loss during training (LL-Cp).

    A :class:`LabelBank` whose states are written in the training step
    rather than between epochs: the loss reads the batch's rows
    (``pseudo_label``, 1 where an entry was corrected to a positive) and
    marks new corrections through ``write_corrections``, a writer of the
    batch's rows that it receives with them (:meth:`entries`). Corrections
    only ever turn an entry positive. The soft labels of the base bank are
    not used.

    Each rank writes the rows of the samples it trains on (nothing is
    communicated per iteration; MMEngine's DDP wrapper does not broadcast
    buffers); :meth:`merge_ranks`, called after every training epoch by
    :class:`SPMLSampleStateHook`, takes the union of the ranks' corrections,
    so every rank holds the same bank from the next epoch on and the
    checkpoint saved after the epoch holds all of them. As a buffer of the
    model the bank is saved in checkpoints and restored by ``--resume``.

    Args:
        num_classes (int): Number of classes C (set by the head).
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be sized by :class:`SPMLSampleStateHook`. Defaults to 0.
        storage (str): ``'full'`` (5 bytes per entry), ``'float16'`` (2.25)
            or ``'uint8'`` (1.25), as in :class:`LabelBank`; the states are
            exact in every mode, so ``'uint8'`` loses nothing here. Defaults
            to ``'full'``.

    Example:
        >>> # the head of LLLoss's LL-Cp example, in the smallest exact storage
        >>> label_bank = dict(type='CorrectedLabelBank', storage='uint8')
    """

    ENTRY_KEYS = ('pseudo_label', 'write_corrections')
    WRITTEN_BY = 'loss'

    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, object]:
        """The batch's states and the writer of its new corrections."""
        index = self.rows(index)
        return dict(
            pseudo_label=super().entries(index, target)['pseudo_label'],
            write_corrections=functools.partial(self.write_corrections,
                                                index))

    @torch.no_grad()
    def write_corrections(self, index: torch.Tensor,
                          corrected: torch.Tensor) -> None:
        """Mark entries of rows ``index`` as positives, on the device.

        Args:
            index (torch.Tensor): The batch's sample indices (B,).
            corrected (torch.Tensor): Boolean mask (B, C) of the entries.
        """
        if self.storage == 'full':
            rows = self.pseudo_label[index]
            self.pseudo_label[index] = rows.masked_fill(
                corrected.to(rows.device), PSEUDO_POSITIVE)
            return
        rows = decode_states(self.state_codes[index], self.num_classes)
        self.state_codes[index] = encode_states(
            rows.masked_fill(corrected.to(rows.device), PSEUDO_POSITIVE))

    @torch.no_grad()
    def merge_ranks(self) -> None:
        """Give every rank the union of all ranks' corrections."""
        if dist.get_world_size() == 1:
            return
        if self.storage == 'full':
            states = self.pseudo_label.view(torch.uint8)
            dist.all_reduce(states, op='max')
            return
        states = decode_states(self.state_codes, self.num_classes)
        merged = states.view(torch.uint8)
        dist.all_reduce(merged, op='max')
        self.state_codes.copy_(encode_states(merged.view(torch.int8)))
