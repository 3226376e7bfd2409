import copy
import inspect
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

#: States of a bank entry.
UNLABELLED = 0
PSEUDO_NEGATIVE = -1
PSEUDO_POSITIVE = 1

#: Storage modes of a bank: bytes per (sample, class) entry. ``full`` keeps
#: an int8 state and a float32 soft label; the compact modes keep the state
#: as a 2-bit code (four entries per byte) and the soft label as float16 or
#: uint8.
STORAGE_BYTES = dict(full=5., float16=2.25, uint8=1.25)

#: Classes per byte of the compact states, so a class block of a compact
#: bank starts at a multiple of it.
STATES_PER_BYTE = 4

#: byte -> the int8 states of its four 2-bit codes (entry j in bits 2j and
#: 2j + 1), as one int32 word
_STATE_WORDS = ((((torch.arange(256)[:, None] >> 2 * torch.arange(4)) & 3) ^
                 2) - 2).to(torch.int8).view(torch.int32).view(-1)


def encode_states(pseudo_label: torch.Tensor) -> torch.Tensor:
    """States (N, C) in {-1, 0, 1} as 2-bit two's complement codes, four
    per byte (N, ceil(C / 4)) uint8; a zero byte is four unlabelled entries.
    """
    codes = F.pad((pseudo_label & 3).view(torch.uint8),
                  (0, -pseudo_label.size(-1) % STATES_PER_BYTE))
    weights = torch.tensor([1, 4, 16, 64], dtype=torch.uint8,
                           device=codes.device)
    # codes <= 3 in separate bit pairs: the uint8 sum cannot overflow
    return (codes.unflatten(-1, (-1, 4)) * weights).sum(-1, dtype=torch.uint8)


def decode_states(codes: torch.Tensor, num_classes: int) -> torch.Tensor:
    """The int8 states (N, num_classes) of codes from
    :func:`encode_states`: one table look-up per byte."""
    words = _STATE_WORDS.to(codes.device).index_select(
        0, codes.reshape(-1).int())
    return words.view(*codes.shape).view(torch.int8)[:, :num_classes]


def encode_soft_labels(soft_label: torch.Tensor,
                       storage: str) -> torch.Tensor:
    """Soft labels in [0, 1] in a compact storage's dtype: float16 (relative
    error <= 2^-11), or uint8 steps of 1/255 (error <= 1/510)."""
    if storage == 'float16':
        return soft_label.half()
    return soft_label.mul(255).add_(0.5).clamp_(0, 255).to(torch.uint8)


def decode_soft_labels(code: torch.Tensor) -> torch.Tensor:
    """Float32 soft labels of codes from :func:`encode_soft_labels`."""
    if code.dtype == torch.uint8:
        return code.float().div_(255)
    return code.float()


#: What the head records from one training batch: sample indices (B,),
#: probabilities (B, C), observed labels (B, C) and, when the samples carry
#: them, true labels (B, C) for diagnostics.
Record = Tuple[torch.Tensor, torch.Tensor, torch.Tensor,
               Optional[torch.Tensor]]


def sample_indices(data_samples: Sequence[DataSample]) -> torch.Tensor:
    """The ``sample_idx`` metainfo of a batch, as a long tensor (B,)."""
    index = []
    for sample in data_samples:
        idx = sample.get('sample_idx')
        if idx is None:
            raise ValueError(
                'a training sample has no sample_idx metainfo, which the '
                'label bank is indexed by; keep "sample_idx" in the '
                'meta_keys of PackInputs (its default) and use a dataset '
                'derived from mmengine BaseDataset, which sets it.')
        index.append(int(idx))
    return torch.tensor(index, dtype=torch.long)


def label_matrix(data_samples: Sequence[DataSample], key: str,
                 num_classes: int) -> Optional[torch.Tensor]:
    """A boolean (B, C) matrix from the label indices in field ``key``.

    Returns None when a sample lacks the field.
    """
    matrix = torch.zeros(len(data_samples), num_classes, dtype=torch.bool)
    for row, sample in zip(matrix, data_samples):
        labels = sample.get(key)
        if labels is None:
            return None
        row[torch.as_tensor(labels, dtype=torch.long)] = True
    return matrix


@MODELS.register_module()
class LabelBank(nn.Module):
    """Per-sample, per-class pseudo-label state, indexed by ``sample_idx``.

    Two buffers of shape (N, C), N the training set's length: the state of
    every entry (:data:`UNLABELLED`, :data:`PSEUDO_NEGATIVE` or
    :data:`PSEUDO_POSITIVE`; observed labels are not stored, they come with
    each batch) and its soft label. Being buffers of the model, they are saved
    in every checkpoint and restored by ``--resume``.

    The bank is created empty by the head and sized from the training set by
    :class:`SPMLPseudoLabelHook` before a checkpoint is resumed. Loading a
    checkpoint into an empty bank (``tools/test.py``, inference) adopts its
    size; loading one whose bank has another number of samples than the
    sized bank is refused, since its rows would belong to other images.

    During training the head passes :meth:`entries` of the batch to its loss
    as keyword arguments. Update rules (e.g.
    :class:`AsymmetricPseudoLabeling`) write the buffers between epochs.
    Subclasses that store more per-sample state register more buffers and
    extend :attr:`ENTRY_KEYS` and :meth:`entries`; a buffer a subclass adds
    has the class as its last dimension (e.g. a per-class (C,) vector), so
    that :meth:`class_block` can slice it.

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

    #: Keyword arguments the bank passes to the loss.
    ENTRY_KEYS = ('pseudo_label', 'soft_label')

    def __init__(self,
                 num_classes: int,
                 num_samples: int = 0,
                 storage: str = 'full'):
        super().__init__()
        if num_classes < 1 or num_samples < 0:
            raise ValueError('LabelBank needs num_classes >= 1 and '
                             f'num_samples >= 0, got {num_classes} and '
                             f'{num_samples}')
        if storage not in STORAGE_BYTES:
            raise ValueError(f'storage must be one of {list(STORAGE_BYTES)}'
                             f', got {storage!r}')
        self.num_classes = num_classes
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
        self._records: Optional[List[Record]] = None

    @property
    def _sample_buffers(self) -> Tuple[str, str]:
        """Names of the per-sample buffers of this storage mode."""
        if self.storage == 'full':
            return ('pseudo_label', 'soft_label')
        return ('state_codes', 'soft_label_code')

    @property
    def num_samples(self) -> int:
        return getattr(self, self._sample_buffers[0]).size(0)

    def allocate(self, num_samples: int) -> None:
        """Size an empty bank for ``num_samples`` samples, all unlabelled.

        A bank that already has rows must have exactly ``num_samples``.
        """
        if num_samples == self.num_samples:
            return
        if self.num_samples:
            raise ValueError(
                f'the label bank holds {self.num_samples} samples but the '
                f'training set has {num_samples}; its rows belong to another '
                'dataset (did the dataset or its indices change?).')
        for name in self._sample_buffers:
            old = getattr(self, name)
            setattr(self, name, old.new_zeros((num_samples, ) + old.shape[1:]))

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
            if name not in self._sample_buffers
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

    def check_loss(self, loss_module: nn.Module) -> None:
        """Fail unless ``loss_module`` accepts the bank's entries."""
        params = inspect.signature(loss_module.forward).parameters
        takes_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
        missing = [k for k in self.ENTRY_KEYS if k not in params]
        if missing and not takes_all:
            raise ValueError(
                f'{type(loss_module).__name__} takes no label bank entries '
                f'({", ".join(missing)}); drop the head\'s label_bank or use '
                'a loss that reads them, e.g. EMLoss.')

    def _index(self, data_samples: Sequence[DataSample]) -> torch.Tensor:
        index = sample_indices(data_samples)
        if self.num_samples == 0:
            raise RuntimeError(
                'the label bank is empty; add SPMLPseudoLabelHook to '
                'custom_hooks, which sizes it from the training set.')
        bad = (index < 0) | (index >= self.num_samples)
        if bad.any():
            raise ValueError(
                f'sample_idx {int(index[bad][0])} is outside the label bank '
                f'of {self.num_samples} samples; the training set changed '
                'since the bank was sized.')
        return index.to(getattr(self, self._sample_buffers[0]).device)

    def entries(self,
                data_samples: Sequence[DataSample]) -> Dict[str, torch.Tensor]:
        """The batch's rows, as keyword arguments of the loss."""
        index = self._index(data_samples)
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

    def record(self, data_samples: Sequence[DataSample],
               cls_score: torch.Tensor, target: torch.Tensor) -> None:
        """Keep a training batch's probabilities while recording is on.

        Args:
            data_samples (Sequence[DataSample]): The batch's samples.
            cls_score (torch.Tensor): Their logits (B, C).
            target (torch.Tensor): Their observed labels (B, C): 1 observed
                positive, 0 unobserved, -1 observed negative; the record
                keeps the positives.
        """
        if self._records is None:
            return
        full = label_matrix(data_samples, 'gt_label_full', self.num_classes)
        self._records.append(
            (self._index(data_samples),
             torch.sigmoid(cls_score.detach().float()),
             target.detach() > 0, full))

    def stop_recording(self) -> List[Record]:
        """End recording; return what :meth:`record` kept."""
        records, self._records = self._records or [], None
        return records

    def _load_from_state_dict(self, state_dict, prefix, local_metadata,
                              strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self._convert_stored(state_dict, prefix)
        stored = state_dict.get(prefix + self._sample_buffers[0])
        if stored is not None and stored.size(0) != self.num_samples:
            if self.num_samples:
                raise ValueError(
                    f'the checkpoint\'s label bank ({prefix[:-1]}) holds '
                    f'{stored.size(0)} samples but the training set has '
                    f'{self.num_samples}; it was written for another dataset '
                    'or another `indices` setting, so its pseudo-labels '
                    'cannot be resumed. Train from scratch, or use the '
                    'dataset the checkpoint was trained on.')
            self.allocate(stored.size(0))
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
