"""What a label bank reads of a batch: its samples' indices and label
matrices, and the scores kept for an update rule."""
from typing import NamedTuple, Optional, Sequence

import torch
from mmpretrain.structures import DataSample


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
