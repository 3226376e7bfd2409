import inspect
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

#: States of a bank entry.
UNLABELLED = 0
PSEUDO_NEGATIVE = -1
PSEUDO_POSITIVE = 1

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
    extend :attr:`ENTRY_KEYS` and :meth:`entries`.

    Args:
        num_classes (int): Number of classes C (set by the head).
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be sized when training starts. Defaults to 0.

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048, loss=dict(type='EMLoss'),
        ...             label_bank=dict(type='LabelBank'))
    """

    #: Keyword arguments the bank passes to the loss.
    ENTRY_KEYS = ('pseudo_label', 'soft_label')

    def __init__(self, num_classes: int, num_samples: int = 0):
        super().__init__()
        if num_classes < 1 or num_samples < 0:
            raise ValueError('LabelBank needs num_classes >= 1 and '
                             f'num_samples >= 0, got {num_classes} and '
                             f'{num_samples}')
        self.num_classes = num_classes
        self.register_buffer(
            'pseudo_label',
            torch.zeros(num_samples, num_classes, dtype=torch.int8))
        self.register_buffer('soft_label',
                             torch.zeros(num_samples, num_classes))
        self._records: Optional[List[Record]] = None

    @property
    def num_samples(self) -> int:
        return self.pseudo_label.size(0)

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
        for name in ('pseudo_label', 'soft_label'):
            old = getattr(self, name)
            setattr(self, name, old.new_zeros(num_samples, self.num_classes))

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
        return index.to(self.pseudo_label.device)

    def entries(self,
                data_samples: Sequence[DataSample]) -> Dict[str, torch.Tensor]:
        """The batch's rows, as keyword arguments of the loss."""
        index = self._index(data_samples)
        return dict(
            pseudo_label=self.pseudo_label[index],
            soft_label=self.soft_label[index])

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
            target (torch.Tensor): Their observed labels (B, C) in 0/1.
        """
        if self._records is None:
            return
        full = label_matrix(data_samples, 'gt_label_full', self.num_classes)
        self._records.append(
            (self._index(data_samples),
             torch.sigmoid(cls_score.detach().float()),
             target.detach().bool(), full))

    def stop_recording(self) -> List[Record]:
        """End recording; return what :meth:`record` kept."""
        records, self._records = self._records or [], None
        return records

    def _load_from_state_dict(self, state_dict, prefix, local_metadata,
                              strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        stored = state_dict.get(prefix + 'pseudo_label')
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
