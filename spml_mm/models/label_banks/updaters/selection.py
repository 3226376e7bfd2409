import torch


def count_per_class(mask: torch.Tensor) -> torch.Tensor:
    """True entries of each class (column) of a boolean (N, C) mask, (C,)
    long; summed as bytes (a boolean sum widens every entry to int64)."""
    return mask.view(torch.uint8).sum(0, dtype=torch.int32).long()


def lowest_per_class(scores: torch.Tensor, candidates: torch.Tensor,
                     num_per_class: torch.Tensor) -> torch.Tensor:
    """Per class, the lowest-scoring candidates, by selection, not sorting.

    Class ``c`` gets the ``num_per_class[c]`` lowest scores among its
    candidate entries (all of them when fewer are left). The matrix is
    laid out class-major, (C, N) with each class's scores contiguous; one
    ``kthvalue`` per class (an O(N) selection) gives its threshold, and
    the entries at or below it are chosen in one comparison. Where several
    entries share the threshold score and not all fit, the ones with the
    lowest sample index are chosen, so every rank picks the same.

    Args:
        scores (torch.Tensor): Finite scores (N, C).
        candidates (torch.Tensor): Boolean (N, C), the entries that may be
            chosen.
        num_per_class (torch.Tensor): How many to choose per class (C,).

    Returns:
        torch.Tensor: The chosen entries, boolean (N, C).
    """
    free = candidates.t().contiguous()
    num = torch.minimum(
        num_per_class.to(free.device).long(),
        free.view(torch.uint8).sum(1, dtype=torch.int32).long())
    values = scores.t().contiguous().masked_fill_(~free, float('inf'))
    # the k-th lowest score of each class; -inf chooses nothing
    threshold = values.new_full((values.size(0), 1), float('-inf'))
    for cls in num.nonzero().flatten().tolist():
        threshold[cls] = values[cls].kthvalue(int(num[cls])).values
    chosen = values <= threshold
    excess = chosen.view(torch.uint8).sum(1, dtype=torch.int32).long() - num
    for cls in excess.nonzero().flatten().tolist():
        # ties at the threshold: keep the first of them by sample index
        tied = (values[cls] == threshold[cls]).nonzero().flatten()
        chosen[cls, tied[len(tied) - int(excess[cls]):]] = False
    return chosen.t().contiguous()
