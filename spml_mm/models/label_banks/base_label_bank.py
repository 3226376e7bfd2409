import inspect
from abc import ABCMeta, abstractmethod
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn

from ...utils import to_device

#: The hook that sizes a bank, by who writes it (``WRITTEN_BY``).
SIZING_HOOKS = dict(
    updater='SPMLPseudoLabelHook to custom_hooks',
    loss="default_hooks.sample_state=dict(type='SPMLSampleStateHook')",
    teacher="default_hooks.teacher_scores=dict(type='SPMLTeacherScoreHook')")


class BaseLabelBank(nn.Module, metaclass=ABCMeta):
    """Per-sample state of the training set, indexed by ``sample_idx``,
    that the head passes to its loss.

    The head builds the bank from its ``label_bank`` config and gives the
    loss :meth:`entries` of every training batch as keyword arguments. Each
    kind of bank states:

    - What it gives the loss: :attr:`ENTRY_KEYS`, the keys of
      :meth:`entries`; :meth:`check_loss` makes sure the loss takes them.
    - Who writes it, :attr:`WRITTEN_BY`: ``'updater'``, an update rule
      (:class:`BaseLabelUpdater`) that :class:`SPMLPseudoLabelHook` runs
      between epochs on scores gathered from every rank, so every rank
      writes the same; or ``'loss'``, the loss inside the training step,
      through a writer among the entries, each rank writing the rows of its
      own samples, which :meth:`merge_ranks` merges after every epoch
      (:class:`SPMLSampleStateHook`); or ``'teacher'``, a teacher's scores
      read once from a score file before training
      (:class:`SPMLTeacherScoreHook`). The same hook sizes the bank for the
      training set before training (:meth:`allocate`).
    - What is saved: all its state is buffers, saved in checkpoints under
      their names and restored by ``--resume``; :attr:`row_buffers` names
      the per-sample ones (first dimension N), which :meth:`allocate` sizes
      and a checkpoint's must match. A checkpoint loaded into an empty bank
      (``tools/test.py``, inference) gives it its size.

    Args:
        num_classes (int): Number of classes C (set by the head).
    """

    #: The keyword arguments :meth:`entries` gives the loss.
    ENTRY_KEYS: Tuple[str, ...]
    #: ``'updater'`` or ``'loss'`` (above).
    WRITTEN_BY: str
    #: What messages call the bank.
    NAME: str = 'label bank'

    def __init__(self, num_classes: int):
        super().__init__()
        self.num_classes = num_classes

    @property
    @abstractmethod
    def row_buffers(self) -> Tuple[str, ...]:
        """Names of the per-sample buffers (N, ...), the first one giving
        the number of samples."""

    @property
    def num_samples(self) -> int:
        return getattr(self, self.row_buffers[0]).size(0)

    def allocate(self, num_samples: int) -> None:
        """Size an empty bank for ``num_samples`` samples (zero rows, then
        :meth:`init_rows`).

        A bank that already has rows must have exactly ``num_samples``.
        """
        if num_samples == self.num_samples:
            return
        if self.num_samples:
            raise ValueError(
                f'the {self.NAME} holds {self.num_samples} samples but the '
                f'training set has {num_samples}; its rows belong to another '
                'dataset (did the dataset or its indices change?).')
        for name in self.row_buffers:
            old = getattr(self, name)
            setattr(self, name, old.new_zeros((num_samples, ) + old.shape[1:]))
        self.init_rows()

    def init_rows(self) -> None:
        """Give the rows of a freshly allocated bank their initial values;
        zeros by default."""

    def check_loss(self, loss_module: nn.Module) -> None:
        """Fail unless ``loss_module`` takes the bank's entries."""
        params = inspect.signature(loss_module.forward).parameters
        takes_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
        missing = [k for k in self.ENTRY_KEYS if k not in params]
        if missing and not takes_all:
            raise ValueError(
                f'{type(loss_module).__name__} takes no {self.NAME} entries '
                f'({", ".join(missing)}); drop the head\'s label_bank or use '
                'a loss that reads them.')

    def rows(self, index: torch.Tensor) -> torch.Tensor:
        """``index`` (B,) on the bank's device, checked against its size.

        A host index (:func:`sample_indices`) is checked on the host and
        moved with one non-blocking copy; an index already on the device is
        taken as it is (the head moves the batch's once, then passes it to
        :meth:`record` and :meth:`entries`), since checking it there would
        make the host wait.
        """
        if self.num_samples == 0:
            raise RuntimeError(
                f'the {self.NAME} is empty; add '
                f'{SIZING_HOOKS[self.WRITTEN_BY]}, which sizes it from the '
                'training set.')
        if index.device.type == 'cpu':
            bad = (index < 0) | (index >= self.num_samples)
            if bad.any():
                raise ValueError(
                    f'sample_idx {int(index[bad][0])} is outside the '
                    f'{self.NAME} of {self.num_samples} samples; the training '
                    'set changed since the bank was sized.')
        return to_device(index, getattr(self, self.row_buffers[0]).device)

    @abstractmethod
    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, object]:
        """The batch's keyword arguments of the loss (:attr:`ENTRY_KEYS`).

        Args:
            index (torch.Tensor): The samples' ``sample_idx`` (B,), long.
            target (torch.Tensor): Their observed positives (B, C) in 0/1.
            observed_negative (torch.Tensor, optional): Their observed
                negatives (B, C), boolean (partial labels). Defaults to
                None.
        """

    def record(self, index: torch.Tensor, cls_score: torch.Tensor,
               target: torch.Tensor, data_samples) -> None:
        """Keep a training batch's scores for the update rule (see
        :class:`LabelBank`); a bank written by the loss keeps nothing."""

    def merge_ranks(self) -> None:
        """Give every rank the rows the other ranks wrote since the last
        merge; a bank written by an update rule is the same on every rank
        and needs nothing."""

    def _load_from_state_dict(self, state_dict, prefix, local_metadata,
                              strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        stored = state_dict.get(prefix + self.row_buffers[0])
        if stored is not None and stored.size(0) != self.num_samples:
            if self.num_samples:
                raise ValueError(
                    f"the checkpoint's {self.NAME} ({prefix[:-1]}) holds "
                    f'{stored.size(0)} samples but the training set has '
                    f'{self.num_samples}; it was written for another dataset '
                    'or another `indices` setting, so its rows cannot be '
                    'resumed. Train from scratch, or use the dataset the '
                    'checkpoint was trained on.')
            self.allocate(stored.size(0))
        super()._load_from_state_dict(state_dict, prefix, local_metadata,
                                      strict, missing_keys, unexpected_keys,
                                      error_msgs)
