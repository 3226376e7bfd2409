import pytest
import torch

from spml_mm.models.label_banks.updaters import (count_per_class,
                                                 lowest_per_class)


def sorted_reference(scores, candidates, num_per_class):
    """Per class, a stable sort of the candidates' scores and its first k:
    ties go to the lowest sample index."""
    chosen = torch.zeros_like(candidates)
    for cls in range(scores.size(1)):
        rows = candidates[:, cls].nonzero().flatten()
        order = scores[rows, cls].sort(stable=True).indices
        chosen[rows[order[:int(num_per_class[cls])]], cls] = True
    return chosen


def topk_selection(scores, candidates, num_per_class):
    """The selection of the previous release: one topk over the columns."""
    k = min(int(num_per_class.max()), scores.size(0))
    values, rows = scores.masked_fill(~candidates, float('inf')).topk(
        k, dim=0, largest=False, sorted=True)
    take = (torch.arange(k)[:, None] < num_per_class) & (values != float(
        'inf'))
    chosen = torch.zeros_like(candidates)
    chosen[rows[take], torch.arange(scores.size(1)).expand_as(rows)[take]] = 1
    return chosen


def random_case(seed, levels=None):
    g = torch.Generator().manual_seed(seed)
    n, c = 500, 7
    scores = torch.rand(n, c, generator=g)
    if levels:  # few distinct values: many ties at every threshold
        scores = (scores * levels).floor() / levels
    candidates = torch.rand(n, c, generator=g) < 0.8
    # 0 per class, fewer than the candidates, all of them, more than all
    num = torch.tensor([0, 1, 37, 150, 399, 1000, int(candidates[:, 6].sum())])
    return scores, candidates, num


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('levels', [None, 5, 40])
def test_same_entries_as_a_stable_sort(seed, levels):
    scores, candidates, num = random_case(seed, levels)
    chosen = lowest_per_class(scores, candidates, num)
    assert torch.equal(chosen, sorted_reference(scores, candidates, num))
    assert not (chosen & ~candidates).any()
    expected = torch.minimum(num, candidates.sum(0))
    assert count_per_class(chosen).tolist() == expected.tolist()


@pytest.mark.parametrize('levels', [None, 5])
def test_same_labels_as_the_topk_selection_up_to_ties(levels):
    scores, candidates, num = random_case(7, levels)
    chosen = lowest_per_class(scores, candidates, num)
    previous = topk_selection(scores, candidates, num)
    if levels is None:  # no ties among the random floats
        assert torch.equal(chosen, previous)
    for cls in range(scores.size(1)):
        # the same number of entries and the same scores; with ties the
        # entries behind equal scores may differ
        new = scores[chosen[:, cls], cls].sort().values
        old = scores[previous[:, cls], cls].sort().values
        assert torch.equal(new, old)
        # nothing left out scores below what was chosen
        rest = scores[candidates[:, cls] & ~chosen[:, cls], cls]
        if len(new) and len(rest):
            assert rest.min() >= new.max()


def test_ties_go_to_the_lowest_sample_index():
    scores = torch.tensor([[.5, .2], [.5, .2], [.1, .9], [.5, .2]])
    candidates = torch.ones(4, 2, dtype=torch.bool)
    chosen = lowest_per_class(scores, candidates, torch.tensor([2, 2]))
    # class 0: the lowest (row 2), then the first of rows 0, 1, 3
    # class 1: rows 0, 1, 3 tie at the lowest score
    assert chosen.nonzero().tolist() == [[0, 0], [0, 1], [1, 1], [2, 0]]


def test_count_per_class():
    mask = torch.tensor([[1, 0, 1], [1, 0, 0]], dtype=torch.bool)
    assert count_per_class(mask).tolist() == [2, 0, 1]
    assert count_per_class(mask.t().contiguous().t()).tolist() == [2, 0, 1]
