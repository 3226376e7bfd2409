import pytest
import torch
from mmpretrain.structures import DataSample

from spml_mm.models.label_banks.batch import (label_matrix, sample_indices,
                                              scatter_indices)


def samples(labels, key='gt_label_full'):
    out = []
    for i, index in enumerate(labels):
        sample = DataSample(metainfo=dict(sample_idx=10 + i))
        if index is not None:
            sample.set_field(torch.tensor(index, dtype=torch.long), key)
        out.append(sample)
    return out


@pytest.mark.parametrize('labels', [[[2], [0], [3]], [[0, 2], [], [1, 2, 3]]])
def test_label_matrix(labels):
    """Equal lengths (stacked) and ragged rows (concatenated), against the
    matrix set entry by entry."""
    expected = torch.zeros(3, 4, dtype=torch.bool)
    for row, index in enumerate(labels):
        for column in index:
            expected[row, column] = True
    matrix = label_matrix(samples(labels), 'gt_label_full', 4)
    assert matrix.dtype == torch.bool
    assert torch.equal(matrix, expected)
    assert label_matrix(samples([[1], None]), 'gt_label_full', 4) is None


def test_label_matrix_on_the_device():
    matrix = label_matrix(samples([[1], [0, 2]]), 'gt_label_full', 4, 'meta')
    assert matrix.device.type == 'meta' and matrix.shape == (2, 4)


def test_scatter_indices_sets_a_value():
    target = torch.zeros(2, 3)
    scatter_indices(target, [torch.tensor([2]), torch.tensor([0, 1])], -1.)
    assert torch.equal(target, torch.tensor([[0., 0., -1.], [-1., -1., 0.]]))


def test_sample_indices():
    assert torch.equal(sample_indices(samples([[0], [1]])),
                       torch.tensor([10, 11]))
