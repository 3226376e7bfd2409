"""What a label bank reads of a batch: its samples' indices and label
matrices, and the scores kept for an update rule."""
from typing import List, NamedTuple, Optional, Sequence, Union

import torch
from mmengine.dataset import BaseDataset
from mmpretrain.structures import DataSample

from ...utils import to_device


class ScoredBatch(NamedTuple):
    """The scores of one batch of training samples, for an update rule.

    Attributes:
        index (torch.Tensor): The samples' ``sample_idx`` (B,), long.
        scores (torch.Tensor): Their probabilities (B, C).
        observed (torch.Tensor): Their observed positives (B, C), boolean.
        full (torch.Tensor, optional): Their true labels (B, C), boolean,
            for diagnostics; None when the samples lack ``gt_label_full``.
    """
    index: torch.Tensor
    scores: torch.Tensor
    observed: torch.Tensor
    full: Optional[torch.Tensor]


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


def training_set_size(dataset, user: str, state: str) -> int:
    """The size N of the training set that ``user`` indexes its per-sample
    ``state`` into by ``sample_idx``; refused for a dataset wrapper and for
    samples without ``sample_idx``."""
    if not isinstance(dataset, BaseDataset):
        raise ValueError(
            f'{user} indexes {state} by sample_idx of the training dataset '
            'and does not support dataset wrappers '
            f'({type(dataset).__name__}).')
    sample_indices([dataset[0]['data_samples']])
    return len(dataset)


def scatter_indices(target: torch.Tensor, indices: List[torch.Tensor],
                    value: Union[float, bool]) -> None:
    """Set ``target[i, indices[i]] = value`` for every row i, in place.

    One concatenation (a stack when every row has as many indices, as
    single positives do) and one scatter on ``target``'s device; the row of
    each index comes from the lengths, read from the shapes on the host.
    """
    lengths = [len(index) for index in indices]
    if len(set(lengths)) == 1:
        columns = to_device(torch.stack(list(indices)), target.device)
        target.scatter_(1, columns, value)
        return
    rows = torch.arange(len(indices)).repeat_interleave(torch.tensor(lengths))
    target[to_device(rows, target.device),
           to_device(torch.cat(list(indices)), target.device)] = value


def label_matrix(data_samples: Sequence[DataSample],
                 key: str,
                 num_classes: int,
                 device: Union[str, torch.device] = 'cpu'
                 ) -> Optional[torch.Tensor]:
    """A boolean (B, C) matrix on ``device`` from the label indices in field
    ``key``, built with one scatter (:func:`scatter_indices`), wherever the
    indices are: the host never waits on the device.

    Returns None when a sample lacks the field.
    """
    labels = [sample.get(key) for sample in data_samples]
    if any(index is None for index in labels):
        return None
    matrix = torch.zeros(len(data_samples), num_classes, dtype=torch.bool,
                         device=device)
    scatter_indices(
        matrix,
        [torch.as_tensor(index, dtype=torch.long).view(-1)
         for index in labels], True)
    return matrix
