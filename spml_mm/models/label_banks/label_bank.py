import copy
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import torch
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE, UNLABELLED
from .base_label_bank import BaseLabelBank
from .batch import ScoredBatch, label_matrix
from .storage import (STATES_PER_BYTE, STORAGE_BYTES, decode_soft_labels,
                      decode_states, encode_soft_labels, encode_states)


@MODELS.register_module()
class LabelBank(BaseLabelBank):
    """Per-sample, per-class pseudo-label state, indexed by ``sample_idx``.

    Two buffers of shape (N, C), N the training set's length: the state of
    every entry (:data:`UNLABELLED`, :data:`PSEUDO_NEGATIVE` or
    :data:`PSEUDO_POSITIVE`; observed labels are not stored, they come with
    each batch) and its soft label. Being buffers of the model, they are saved
    in every checkpoint and restored by ``--resume``.

    The bank is created empty by the head and sized from the training set by
    :class:`SPMLPseudoLabelHook` before a checkpoint is resumed; loading a
    checkpoint whose bank has another number of samples than the sized bank
    is refused, since its rows would belong to other images
    (:class:`BaseLabelBank`).

    During training the head passes :meth:`entries` of the batch to its loss
    as keyword arguments. Update rules (e.g.
    :class:`AsymmetricPseudoLabeling`) write the buffers between epochs
    (``WRITTEN_BY = 'updater'``), from the training set's scores, or from
    the scores of the epoch's training batches that :meth:`record` keeps.
    Subclasses that store more state register more buffers and extend
    :attr:`ENTRY_KEYS` and :meth:`entries`; a buffer a subclass adds has the
    class as its last dimension (e.g. a per-class (C,) vector), so that
    :meth:`class_block` can slice it.

    Storage. ``'full'`` keeps ``pseudo_label`` (int8) and ``soft_label``
    (float32): 5 bytes per entry. The compact modes keep the state as 2-bit
    codes, four classes per byte, in ``state_codes`` (N, ceil(C/4)) and the
    soft label in ``soft_label_code`` (N, C):
    ``'float16'`` (2.25 bytes per entry; soft labels within a relative
    2^-11 of float32) or ``'uint8'`` (1.25 bytes; soft labels rounded to
    multiples of 1/255, within 1/510). States are exact in every mode, so
    the pseudo-labels an update rule selects are the same; the loss reads
    the soft labels decoded to float32 (:meth:`entries`). Rules read and
    write a bank through :meth:`class_block`, which shows every mode as a
    full-storage bank. A checkpoint written in one mode loads into a bank
    of another (it is converted, with the target mode's rounding).

    Args:
        num_classes (int): Number of classes C (set by the head).
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be sized when training starts. Defaults to 0.
        storage (str): ``'full'``, ``'float16'`` or ``'uint8'`` (see
            above; :data:`STORAGE_BYTES`). Defaults to ``'full'``.

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048, loss=dict(type='EMLoss'),
        ...             label_bank=dict(type='LabelBank'))
        >>> # web scale: 1.25 bytes per entry instead of 5
        >>> label_bank = dict(type='LabelBank', storage='uint8')
    """

    ENTRY_KEYS = ('pseudo_label', 'soft_label')
    WRITTEN_BY = 'updater'

    def __init__(self,
                 num_classes: int,
                 num_samples: int = 0,
                 storage: str = 'full'):
        super().__init__(num_classes)
        if num_classes < 1 or num_samples < 0:
            raise ValueError('LabelBank needs num_classes >= 1 and '
                             f'num_samples >= 0, got {num_classes} and '
                             f'{num_samples}')
        if storage not in STORAGE_BYTES:
            raise ValueError(f'storage must be one of {list(STORAGE_BYTES)}'
                             f', got {storage!r}')
        self.storage = storage
        if storage == 'full':
            self.register_buffer(
                'pseudo_label',
                torch.zeros(num_samples, num_classes, dtype=torch.int8))
            self.register_buffer('soft_label',
                                 torch.zeros(num_samples, num_classes))
        else:
            # zero codes: unlabelled entries with soft label 0
            self.register_buffer(
                'state_codes',
                torch.zeros(num_samples, -(-num_classes // STATES_PER_BYTE),
                            dtype=torch.uint8))
            self.register_buffer(
                'soft_label_code',
                torch.zeros(num_samples, num_classes,
                            dtype=getattr(torch, storage)))
        self._records: Optional[List[ScoredBatch]] = None

    @property
    def row_buffers(self) -> Tuple[str, str]:
        """The per-sample buffers of this storage mode; zero rows are
        unlabelled entries with soft label 0."""
        if self.storage == 'full':
            return ('pseudo_label', 'soft_label')
        return ('state_codes', 'soft_label_code')

    @contextmanager
    def class_block(self, start: int, end: int) -> Iterator['LabelBank']:
        """The bank of classes ``[start, end)``, as a full-storage bank.

        Update rules write the yielded bank in place (``pseudo_label``,
        ``soft_label`` and a subclass's per-class buffers, sliced to the
        block). In ``'full'`` storage its buffers are views of this bank's;
        in a compact storage the block is decoded (5 bytes per entry of the
        block) and encoded back when the ``with`` block ends. A compact
        block starts at a multiple of :data:`STATES_PER_BYTE` (4) and ends
        at one or at C.

        Args:
            start (int): First class of the block.
            end (int): One past its last class.
        """
        per_byte = STATES_PER_BYTE
        if not 0 <= start < end <= self.num_classes or (
                self.storage != 'full' and
            (start % per_byte or end % per_byte and end != self.num_classes)):
            raise ValueError(
                f'class block [{start}, {end}) is outside the '
                f'{self.num_classes} classes of the bank, or not aligned to '
                f'bytes of the compact storage (start a multiple of '
                f'{per_byte}, end a multiple of {per_byte} or C)')
        if self.storage == 'full' and end - start == self.num_classes:
            yield self
            return
        buffers = {
            name: buf[..., start:end]
            for name, buf in self._buffers.items()
            if name not in self.row_buffers
        }
        if self.storage == 'full':
            buffers.update(
                pseudo_label=self.pseudo_label[:, start:end],
                soft_label=self.soft_label[:, start:end])
        else:
            packed = slice(start // per_byte, -(-end // per_byte))
            buffers.update(
                pseudo_label=decode_states(self.state_codes[:, packed],
                                           end - start),
                soft_label=decode_soft_labels(
                    self.soft_label_code[:, start:end]))
        block = copy.copy(self)
        block._buffers = buffers
        block.num_classes, block.storage = end - start, 'full'
        yield block
        if self.storage != 'full':
            self.state_codes[:, packed] = encode_states(block.pseudo_label)
            self.soft_label_code[:, start:end] = encode_soft_labels(
                block.soft_label, self.storage)

    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, torch.Tensor]:
        """The batch's rows: states and soft labels (B, C)."""
        index = self.rows(index)
        if self.storage == 'full':
            return dict(
                pseudo_label=self.pseudo_label[index],
                soft_label=self.soft_label[index])
        return dict(
            pseudo_label=decode_states(self.state_codes[index],
                                       self.num_classes),
            soft_label=decode_soft_labels(self.soft_label_code[index]))

    def start_recording(self) -> None:
        """Keep the scores of the following training batches (see
        :meth:`record`) until :meth:`stop_recording`."""
        self._records = []

    def record(self, index: torch.Tensor, cls_score: torch.Tensor,
               target: torch.Tensor,
               data_samples: Sequence[DataSample]) -> None:
        """Keep a training batch's probabilities while recording is on.

        Args:
            index (torch.Tensor): The samples' ``sample_idx`` (B,).
            cls_score (torch.Tensor): Their logits (B, C).
            target (torch.Tensor): Their observed labels (B, C): 1 observed
                positive, 0 unobserved, -1 observed negative; the record
                keeps the positives.
            data_samples (Sequence[DataSample]): The samples, whose true
                labels (``gt_label_full``) the record keeps for diagnostics.
        """
        if self._records is None:
            return
        full = label_matrix(data_samples, 'gt_label_full', self.num_classes,
                            cls_score.device)
        self._records.append(
            ScoredBatch(self.rows(index),
                        torch.sigmoid(cls_score.detach().float()),
                        target.detach() > 0, full))

    def stop_recording(self) -> List[ScoredBatch]:
        """End recording; return what :meth:`record` kept."""
        records, self._records = self._records or [], None
        return records

    def _load_from_state_dict(self, state_dict, prefix, local_metadata,
                              strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self._convert_stored(state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata,
                                      strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _convert_stored(self, state_dict: dict, prefix: str) -> None:
        """Rewrite a bank stored in another storage mode into this one's."""
        if prefix + 'pseudo_label' in state_dict:
            stored = 'full'
        elif prefix + 'state_codes' in state_dict:
            code = state_dict[prefix + 'soft_label_code']
            stored = 'uint8' if code.dtype == torch.uint8 else 'float16'
        else:
            return
        if stored == self.storage:
            return
        if stored == 'full':
            pseudo_label = state_dict.pop(prefix + 'pseudo_label')
            soft_label = state_dict.pop(prefix + 'soft_label')
        else:
            pseudo_label = decode_states(
                state_dict.pop(prefix + 'state_codes'), self.num_classes)
            soft_label = decode_soft_labels(
                state_dict.pop(prefix + 'soft_label_code'))
        if self.storage == 'full':
            state_dict[prefix + 'pseudo_label'] = pseudo_label
            state_dict[prefix + 'soft_label'] = soft_label
        else:
            state_dict[prefix + 'state_codes'] = encode_states(pseudo_label)
            state_dict[prefix + 'soft_label_code'] = encode_soft_labels(
                soft_label, self.storage)
