"""The scoring pass of a label bank: score the training set, gather the
scores block by block across ranks, and update the bank.

:class:`~spml_mm.engine.hooks.SPMLPseudoLabelHook` decides when this runs;
everything about how lives here.
"""
import bisect
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
from mmengine import dist
from mmengine.logging import MMLogger
from mmengine.runner.amp import autocast

from spml_mm.models.label_banks import LabelBank
from spml_mm.models.label_banks.batch import (ScoredBatch, label_matrix,
                                              sample_indices)
from spml_mm.models.label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE
from spml_mm.utils import to_device

#: Share of ``max_gather_mb`` that one round of the chunked gather moves
#: (all ranks' rows together).
ROUND_SHARE = 1 / 32


@torch.no_grad()
def score_training_set(model: nn.Module, loader, num_classes: int,
                       amp: bool = False) -> List[ScoredBatch]:
    """Probabilities of this rank's share of ``loader``, as records.

    The model runs in eval mode (restored afterwards) and the random stream
    of the training run is left as if this pass did not happen (the loader
    draws its base seed from the global generator).

    Args:
        model (nn.Module): The classifier (unwrapped).
        loader: The scoring dataloader over the training set.
        num_classes (int): C.
        amp (bool): Score under autocast. Defaults to False.

    Returns:
        list[ScoredBatch]: One per batch.
    """
    training = model.training
    model.eval()
    records = []
    with torch.random.fork_rng(devices=[]):
        for data in loader:
            with autocast(enabled=amp):
                samples = model.test_step(data)
            scores = torch.stack([s.pred_score for s in samples]).float()
            records.append(
                ScoredBatch(
                    to_device(sample_indices(samples), scores.device),
                    scores,
                    label_matrix(samples, 'gt_label', num_classes,
                                 scores.device),
                    label_matrix(samples, 'gt_label_full', num_classes,
                                 scores.device)))
    model.train(training)
    return records


def classes_per_block(num_samples: int, num_classes: int,
                      max_gather_mb: float) -> int:
    """The widest block of classes, a multiple of 8 (at least 8), whose
    (num_samples, block) float32 scores take at most ``max_gather_mb`` MB.
    """
    per_class = 4 * max(num_samples, 1) / 2**20
    return min(num_classes, max(8, int(max_gather_mb / per_class) // 8 * 8))


def count_non_finite(records: Sequence[ScoredBatch]) -> int:
    """Scores that are NaN or infinite, summed over all ranks."""
    bad = sum(int((~r.scores.isfinite()).count_nonzero()) for r in records)
    return int(sum(t.item() for t in dist.all_gather(torch.tensor([bad]))))


def _sample_positions(
    records: Sequence[ScoredBatch], num_samples: int
) -> Tuple[torch.Tensor, List[int], torch.Tensor, bool, torch.device]:
    """Every rank's sample indices, in rank order, and where each sample's
    first copy sits among them.

    Returns:
        tuple: Indices of all ranks' rows (R,), rows per rank, the position
        of each sample's first copy (N,), whether every record carries true
        labels, and this rank's device.
    """
    has_full = torch.tensor(
        [int(all(r.full is not None for r in records))])
    has_full = bool(torch.cat(dist.all_gather(has_full)).all())
    device = records[0].scores.device if records else torch.device('cpu')
    index = (torch.cat([r.index for r in records]).to(device) if records else
             torch.zeros(0, dtype=torch.long))
    counts = torch.cat(dist.all_gather(torch.tensor([len(index)]))).tolist()
    padded = index.new_zeros(max(counts))
    padded[:len(index)] = index
    index = torch.cat([
        part[:n] for part, n in zip(dist.all_gather(padded), counts)
    ])
    if index.numel() and (index.min() < 0 or index.max() >= num_samples):
        raise ValueError(
            f'SPMLPseudoLabelHook: sample_idx {int(index.max())} outside the '
            f'training set of {num_samples} samples')
    first = torch.full((num_samples, ), len(index), dtype=torch.long,
                       device=index.device).scatter_reduce(
                           0, index,
                           torch.arange(len(index), device=index.device),
                           reduce='amin')
    missing = first == len(index)
    if missing.any():
        raise RuntimeError(
            f'SPMLPseudoLabelHook: {int(missing.sum())} of {num_samples} '
            f'training samples were not scored (first: sample_idx '
            f'{int(missing.nonzero()[0])}); every sample must be seen once '
            'per epoch (no drop_last, no dataset wrappers).')
    return index, counts, first, has_full, device


def _local_rows(records: Sequence[ScoredBatch], offsets: List[int], start: int,
                end: int, classes: slice, has_full: bool,
                device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Rows ``[start, end)`` of this rank's records (in record order; record
    ``i`` starts at row ``offsets[i]``): their scores and their observed
    (and true) labels as one uint8 block."""
    scores, labels = [], []
    first = bisect.bisect_right(offsets, start) - 1
    for offset, (index, score, observed, full) in zip(
            offsets[first:], records[first:]):
        if offset >= end:
            break
        lo, hi = start - offset, end - offset
        lo, hi = max(lo, 0), min(hi, len(index))
        if lo >= hi:
            continue
        scores.append(score[lo:hi, classes])
        parts = [observed[lo:hi, classes]]
        if has_full:
            parts.append(full[lo:hi, classes])
        labels.append(torch.cat([p.to(device) for p in parts], 1))
    return torch.cat(scores), torch.cat(labels).to(torch.uint8)


def gather_records(
    records: Sequence[ScoredBatch],
    num_samples: int,
    num_classes: int,
    classes: slice = slice(None),
    max_gather_mb: float = 256.
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """Assemble every rank's records into full (N, C') matrices.

    Each rank contributes the rows it scored; all ranks receive all rows
    (``mmengine.dist.all_gather``), keep the first copy of a sample scored
    twice (the sampler pads the last rank), and end with identical
    matrices. The rows travel in rounds of at most
    :data:`ROUND_SHARE` x ``max_gather_mb`` (all ranks together), each
    written straight into the result, so besides the result (4 bytes per
    entry of scores, 1 or 2 of labels) a rank holds only one round and
    the sample indices (16 bytes per sample).

    Args:
        records (Sequence[ScoredBatch]): This rank's scored batches.
        num_samples (int): Training set length N.
        num_classes (int): Number of classes C.
        classes (slice): The columns C' to gather. Defaults to all.
        max_gather_mb (float): The bound of :func:`update_in_blocks`; the
            rounds move an eighth of it. Defaults to 256.

    Returns:
        tuple: Scores (N, C') float, observed (N, C') bool and true labels
        (N, C') bool, or None unless every sample carried ``gt_label_full``.
    """
    width = len(range(num_classes)[classes])
    index, counts, first, has_full, device = _sample_positions(
        records, num_samples)
    label_width = (1 + has_full) * width
    world = len(counts)
    rows = max(1, int(ROUND_SHARE * max_gather_mb * 2**20 /
                      (world * (4 * width + label_width))))
    scores = torch.empty(num_samples, width, device=device)
    labels = torch.empty(num_samples, label_width, dtype=torch.uint8,
                         device=device)
    # one round's rows of this rank; rows past its count are not read
    score_chunk = scores.new_zeros(rows, width)
    label_chunk = labels.new_zeros(rows, label_width)
    starts = [sum(counts[:r]) for r in range(world)]
    own = counts[dist.get_rank()]
    offsets = [0]
    for record in records:
        offsets.append(offsets[-1] + len(record.index))
    for start in range(0, max(counts), rows):
        end = min(start + rows, own)
        if start < end:
            score_chunk[:end - start], label_chunk[:end - start] = \
                _local_rows(records, offsets, start, end, classes, has_full,
                            device)
        for rank, (score, label) in enumerate(
                zip(dist.all_gather(score_chunk),
                    dist.all_gather(label_chunk))):
            num = min(rows, counts[rank] - start)
            if num <= 0:
                continue
            position = torch.arange(
                starts[rank] + start, starts[rank] + start + num,
                device=index.device)
            sample, score, label = index[position], score[:num], label[:num]
            keep = first[sample] == position
            if not keep.all():  # a padded copy of a sample scored before
                sample, score, label = sample[keep], score[keep], label[keep]
            scores.index_copy_(0, sample, score)
            labels.index_copy_(0, sample, label)
    labels = labels.view(torch.bool)
    observed, full = labels[:, :width], labels[:, width:]
    return scores, observed, full if has_full else None


def pseudo_label_counts(bank: LabelBank, observed: torch.Tensor,
                        full: Optional[torch.Tensor]) -> Dict[str, int]:
    """Counts of the bank's pseudo-labels and, given the true labels (N, C),
    how many of them are right and how many they could have been; summed
    over class blocks, :func:`pseudo_label_stats` turns them into rates."""
    counts = {}
    for name, state, truth in (('negative', PSEUDO_NEGATIVE, False),
                               ('positive', PSEUDO_POSITIVE, True)):
        chosen = bank.pseudo_label == state
        counts[f'pseudo_{name}s'] = int(chosen.count_nonzero())
        if full is not None:
            true = full.to(chosen.device)
            right = true if truth else ~true
            # the entries a pseudo-label could rightly go to: the true
            # negatives, or the true positives that are not observed
            candidates = right & ~observed.to(chosen.device)
            counts[f'right_{name}s'] = int((chosen & right).count_nonzero())
            counts[f'true_{name}s'] = int(candidates.count_nonzero())
    return counts


def pseudo_label_stats(counts: Dict[str, int]) -> Dict[str, float]:
    """The counts of :func:`pseudo_label_counts` as the log shows them:
    each kind's count (``pseudo_negatives``, ``pseudo_positives``) and,
    with true labels, its precision as ``pseudo_<kind>_acc`` (the share of
    pseudo-labels that are right, the EM paper's Table 4 accuracy) and its
    recall as ``pseudo_<kind>_recall`` (the share of the entries that could
    rightly be labelled that are: the true negatives, or the unobserved true
    positives), in percent. For diagnostics only."""
    stats = {}
    for name in ('negative', 'positive'):
        num = counts[f'pseudo_{name}s']
        stats[f'pseudo_{name}s'] = num
        if f'right_{name}s' in counts:
            right, true = counts[f'right_{name}s'], counts[f'true_{name}s']
            if num:
                stats[f'pseudo_{name}_acc'] = 100 * right / num
            if true:
                stats[f'pseudo_{name}_recall'] = 100 * right / true
    return stats


def update_in_blocks(bank: LabelBank,
                     records: Sequence[ScoredBatch],
                     updater,
                     epoch: int,
                     max_epochs: int,
                     warmup_epochs: int,
                     max_gather_mb: float = 256.) -> Dict[str, float]:
    """Gather the scores and update the bank, one block of classes at a time.

    Every rank holds only its own rows of the scores (``records``). For each
    block of :func:`classes_per_block` classes, the block's columns are
    gathered from all ranks (:func:`gather_records`) and the ``updater``
    writes the bank's block (:meth:`LabelBank.class_block`), so no rank
    holds the (N, C) float32 scores at once; update rules act on each class
    independently, so the result equals one update over all classes.

    Scores that are not finite (NaN or inf, from a diverged model) are
    refused before any block is written: the bank keeps its state, a
    warning names the epoch and the number of such scores, and the result
    is ``dict(non_finite_scores=count)``.

    Args:
        bank (LabelBank): The bank to update.
        records (Sequence[ScoredBatch]): This rank's scored batches.
        updater (BaseLabelUpdater): The update rule.
        epoch (int): The epoch just trained, 1-based.
        max_epochs (int): Epochs of the run (T).
        warmup_epochs (int): T_w.
        max_gather_mb (float): Size bound of a gathered score block.
            Defaults to 256.

    Returns:
        dict: The updater's numbers (integers summed over blocks, floats
        averaged over classes) followed by :func:`pseudo_label_stats`.
    """
    num_samples, num_classes = bank.num_samples, bank.num_classes
    bad = count_non_finite(records)
    if bad:
        MMLogger.get_current_instance().warning(
            f'Pseudo-labels after epoch {epoch} not updated: {bad} of '
            f'{num_samples * num_classes} training-set scores are NaN or '
            'infinite (has the model diverged?); the label bank keeps its '
            'state.')
        return dict(non_finite_scores=bad)
    width = classes_per_block(num_samples, num_classes, max_gather_mb)
    stats: Dict[str, float] = {}
    counts: Dict[str, int] = {}
    for start in range(0, num_classes, width):
        end = min(start + width, num_classes)
        scores, observed, full = gather_records(records, num_samples,
                                                num_classes,
                                                slice(start, end),
                                                max_gather_mb)
        with bank.class_block(start, end) as block:
            block_stats = updater.update(block, scores, observed, epoch,
                                         max_epochs, warmup_epochs)
            block_counts = pseudo_label_counts(block, observed, full)
        for key, value in block_stats.items():
            if isinstance(value, float):
                value *= (end - start) / num_classes
            stats[key] = stats.get(key, 0) + value
        for key, value in block_counts.items():
            counts[key] = counts.get(key, 0) + value
        del scores, observed, full
    stats.update(pseudo_label_stats(counts))
    return stats
