"""The label-bank update after a scoring pass of every pseudo-labeling
config, at COCO and NUS-WIDE scale.

``update_in_blocks`` (gather, update rule, diagnostics) on random scores, one
process, bank storage as the config sets it; time and peak memory.
``.dev_scripts/benchmark/label_bank.py`` breaks it down further and times the
scoring pass itself.

Writes ``speed_banks.json`` and re-renders ``speed.md`` in ``--out-dir``
(default ``work_dirs/results``; ``docs/results`` for the tracked page).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.speed_banks --threads 1 --out-dir /tmp/speed
"""
import argparse
import statistics
import sys
from typing import List

import torch
from mmengine.utils import ProgressBar
from mmpretrain.registry import MODELS

from spml_mm.engine.label_bank_scoring import update_in_blocks
from spml_mm.models.label_banks.batch import ScoredBatch
from benchmark.measure import clock, profile_call
from benchmark.pages.speed import parse_speed_args, report_part
from benchmark.spml_setups import (SIZES, load, method_configs,
                                   one_positive, pseudo_label_hook)


def bank_configs() -> dict:
    """The COCO configs that update a label bank, by table name."""
    configs = {
        name: load(path)
        for name, path in method_configs('coco').items()
    }
    return {n: c for n, c in configs.items() if pseudo_label_hook(c)}


def measure_banks(scale: float, repeats: int, progress: ProgressBar) -> List:
    """The hook's bank update of every pseudo-labeling config."""
    rows = []
    configs = bank_configs()
    for dataset, (num_samples, num_classes) in SIZES.items():
        num_samples = int(num_samples * scale)
        g = torch.Generator().manual_seed(0)
        observed = one_positive(num_samples, num_classes, g).bool()
        scores = torch.rand(num_samples, num_classes, generator=g)
        full = observed | (torch.rand(num_samples, num_classes,
                                      generator=g) < 0.02)
        # one rank's scored batches of 64, as the hook records them
        records = [ScoredBatch(torch.arange(i, min(i + 64, num_samples)),
                               scores[i:i + 64], observed[i:i + 64],
                               full[i:i + 64])
                   for i in range(0, num_samples, 64)]
        for name, cfg in configs.items():
            hook = pseudo_label_hook(cfg)
            updater = MODELS.build(hook['updater'])
            max_epochs, warmup = cfg.train_cfg.max_epochs, hook[
                'warmup_epochs']

            def update(bank):
                update_in_blocks(bank, records, updater, warmup, max_epochs,
                                 warmup, hook.get('max_gather_mb', 256.))

            def fresh_bank():
                bank = MODELS.build(
                    cfg.model.head.label_bank,
                    default_args=dict(num_classes=num_classes))
                bank.allocate(num_samples)
                return bank

            times, timer = [], clock()
            for _ in range(repeats):
                bank = fresh_bank()
                start = timer()
                update(bank)
                times.append(timer() - start)
                progress.update()
            bank = fresh_bank()
            rows.append(
                dict(
                    name=name,
                    matrix=f'{dataset} {num_samples:,} x {num_classes}',
                    time=statistics.median(times),
                    memory=profile_call(lambda: update(bank))['memory'],
                    storage=sum(b.numel() * b.element_size()
                                for b in bank.buffers())))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--scale', type=float, default=1.,
                        help='fraction of the COCO / NUS-WIDE sample counts')
    args = parse_speed_args(parser)
    progress = ProgressBar(len(SIZES) * args.repeats * len(bank_configs()))
    results = measure_banks(args.scale, args.repeats, progress)
    report_part(args.out_dir, 'banks', results, sys.argv)


if __name__ == '__main__':
    main()
