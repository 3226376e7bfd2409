"""The scoring pass's gather, diagnostics and refusals
(spml_mm.engine.label_bank_scoring)."""
import json
import logging
import os
import socket

import pytest
import torch
import torch.distributed as torch_dist
import torch.multiprocessing as mp
from mmengine.logging import MMLogger

from spml_mm.engine.label_bank_scoring import (classes_per_block,
                                               gather_records,
                                               pseudo_label_counts,
                                               pseudo_label_stats,
                                               update_in_blocks)
from spml_mm.models import LabelBank
from spml_mm.models.label_banks.batch import ScoredBatch
from spml_mm.models.label_banks.updaters import AsymmetricPseudoLabeling


def padded_records():
    scores = torch.rand(5, 3)
    obs = torch.eye(3, dtype=torch.bool)[[0, 1, 2, 0, 1]]
    full = obs | torch.tensor([True, False, False])
    # two batches as a padded sampler yields them: sample 0 comes twice
    records = [
        ScoredBatch(torch.tensor([3, 0, 4]), scores[[3, 0, 4]],
                    obs[[3, 0, 4]], full[[3, 0, 4]]),
        ScoredBatch(torch.tensor([1, 2, 0]), scores[[1, 2, 0]] + 1,
                    obs[[1, 2, 0]], full[[1, 2, 0]])
    ]
    return records, scores, obs, full


@pytest.mark.parametrize('max_gather_mb', [256., 1e-9])
def test_gather_keeps_one_row_per_sample(max_gather_mb):
    """With the default bound all rows travel in one round; with a tiny
    one, one row per round."""
    records, scores, obs, full = padded_records()
    got, got_obs, got_full = gather_records(records, 5, 3,
                                            max_gather_mb=max_gather_mb)
    expected = scores.clone()
    expected[[1, 2]] += 1
    torch.testing.assert_close(got, expected)  # the first copy of sample 0
    assert torch.equal(got_obs, obs) and torch.equal(got_full, full)
    # a block of columns
    got, got_obs, got_full = gather_records(records, 5, 3, slice(1, 3),
                                            max_gather_mb)
    torch.testing.assert_close(got, expected[:, 1:])
    assert torch.equal(got_obs, obs[:, 1:])
    assert torch.equal(got_full, full[:, 1:])
    # without gt_label_full on every sample there is no accuracy
    records[1] = records[1]._replace(full=None)
    assert gather_records(records, 5, 3)[2] is None
    with pytest.raises(RuntimeError, match='1 of 6 training samples were '
                       r'not scored \(first: sample_idx 5\)'):
        gather_records(records, 6, 3)
    with pytest.raises(ValueError, match='sample_idx 4 outside'):
        gather_records(records, 4, 3)


def test_stats_compare_with_the_true_labels():
    bank = LabelBank(num_classes=2, num_samples=3)
    bank.pseudo_label[[0, 1, 2], [0, 0, 1]] = torch.tensor(
        [-1, -1, 1], dtype=torch.int8)
    full = torch.tensor([[False, True], [True, False], [False, False]])
    observed = torch.tensor([[False, True], [True, False], [False, False]])
    counts = pseudo_label_counts(bank, observed, full)
    # true negatives: (0, 0), (1, 1), (2, 0), (2, 1); (0, 0) labelled
    # right, (1, 0) wrong. Unobserved true positives: none, so no positive
    # recall.
    assert counts == dict(pseudo_negatives=2, right_negatives=1,
                          true_negatives=4, pseudo_positives=1,
                          right_positives=0, true_positives=0)
    assert pseudo_label_stats(counts) == dict(
        pseudo_negatives=2, pseudo_negative_acc=50.,
        pseudo_negative_recall=25., pseudo_positives=1,
        pseudo_positive_acc=0.)
    # a true positive left unobserved: the positive's recall is 0 of 1
    observed[0, 1] = False
    stats = pseudo_label_stats(pseudo_label_counts(bank, observed, full))
    assert stats['pseudo_positive_recall'] == 0.
    assert pseudo_label_stats(pseudo_label_counts(bank, observed, None)) == \
        dict(pseudo_negatives=2, pseudo_positives=1)


@pytest.mark.parametrize('bad', [float('nan'), float('inf')])
def test_non_finite_scores_are_refused(bad):
    records, _, _, _ = padded_records()
    bank = LabelBank(num_classes=3, num_samples=5)
    bank.pseudo_label[2, 1] = -1
    bank.soft_label[2, 1] = 0.25
    before = bank.pseudo_label.clone(), bank.soft_label.clone()
    records[1].scores[0, 2] = bad
    records[0].scores[1, 0] = bad
    # the newest logger is the current one, which the refusal writes to
    logger = MMLogger.get_instance(f'refusal_{bad}')
    kept = []
    handler = logging.Handler()
    handler.emit = kept.append
    logger.addHandler(handler)
    stats = update_in_blocks(bank, records, AsymmetricPseudoLabeling(), 3,
                             5, 1)
    assert stats == dict(non_finite_scores=2)
    assert [r.levelno for r in kept] == [logging.WARNING]
    assert kept[0].getMessage().startswith(
        'Pseudo-labels after epoch 3 not updated: 2 of 15 training-set '
        'scores are NaN or infinite')
    assert torch.equal(bank.pseudo_label, before[0])
    assert torch.equal(bank.soft_label, before[1])


N, BLOCK = 200000, 64  # one block of 64 classes: 48.8 MB of float32


def _resident_peak():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) * 1024 for line in f
                    if line.startswith('VmHWM:'))


def _resident():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def _gather_rank(rank, world, port, out):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    torch_dist.init_process_group('gloo', rank=rank, world_size=world)
    g = torch.Generator().manual_seed(rank)
    shard = torch.arange(rank, N, world)
    positive = torch.randint(BLOCK, (N, ),
                             generator=torch.Generator().manual_seed(9))
    records = [
        ScoredBatch(i, torch.rand(len(i), BLOCK, generator=g),
                    positive[i, None] == torch.arange(BLOCK), None)
        for i in shard.split(256)
    ]
    max_gather_mb = 4 * N * BLOCK / 2**20
    torch_dist.barrier()
    with open('/proc/self/clear_refs', 'w') as f:
        f.write('5')  # restart the high-water mark from here
    start = _resident()
    scores, observed, _ = gather_records(records, N, BLOCK,
                                         max_gather_mb=max_gather_mb)
    peak = (_resident_peak() - start) / 2**20
    # every rank holds every sample's row, its own ones as they were scored
    own = torch.cat([r.scores for r in records])
    ok = (torch.equal(scores[shard], own)
          and torch.equal(observed, positive[:, None] == torch.arange(BLOCK)))
    result = torch.tensor([peak, float(ok)], dtype=torch.float64)
    parts = [torch.zeros_like(result) for _ in range(world)]
    torch_dist.all_gather(parts, result)
    if rank == 0:
        with open(out, 'w') as f:
            json.dump(dict(peak_mb=[p[0].item() for p in parts],
                           ok=[bool(p[1]) for p in parts],
                           max_gather_mb=max_gather_mb), f)
    torch_dist.destroy_process_group()


@pytest.mark.slow
def test_gather_peak_memory_within_twice_the_bound(tmp_path):
    """Two gloo ranks gather a block of max_gather_mb (200,000 x 64
    float32): each holds at most twice the bound on top of its own rows."""
    assert classes_per_block(N, BLOCK, 4 * N * BLOCK / 2**20) == BLOCK
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    out = str(tmp_path / 'peak.json')
    mp.spawn(_gather_rank, args=(2, port, out), nprocs=2)
    with open(out) as f:
        result = json.load(f)
    assert result['ok'] == [True, True]
    for peak in result['peak_mb']:
        # the result alone (scores and observed labels) is 1.25 x the bound
        assert 1.2 * result['max_gather_mb'] < peak
        assert peak <= 2 * result['max_gather_mb']
