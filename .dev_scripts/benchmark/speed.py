"""Cost of the SPML losses, head and label bank against MMPretrain's own.

Runs the three speed measures in one process, on the CPU, and writes their
JSON and the cost section:

1. ``speed_losses.py``: forward + backward of every method's loss against
   MMPretrain's ``CrossEntropyLoss(use_sigmoid=True)`` at 64 x 80, 64 x 312
   and 256 x 600;
2. ``speed_iteration.py``: a ResNet-50 training iteration with the SPML head
   against MMPretrain's, and each method's head as a share of it;
3. ``speed_banks.py``: the label-bank update after a scoring pass of every
   pseudo-labeling config at COCO and NUS-WIDE scale.

Each can run alone. Timing and profiling are ``measure.py``'s; the tables
(with the targets: every loss within its ratio of ``LOSS_TARGETS``, the
head's share of an iteration under 5%, and the earlier runs of
``speed_history.json``) are rendered by ``pages/speed.py`` into
``speed.md`` in ``--out-dir`` (default ``work_dirs/results``; ``--out-dir
docs/results`` updates the tracked page and re-renders ``docs/RESULTS.md``).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.speed --threads 1 --out-dir docs/results
    python -m benchmark.speed --quick   # smoke, in work_dirs/results
"""
import argparse
import sys

from mmengine.utils import ProgressBar

from benchmark.pages.results import report_written
from benchmark.pages.speed import parse_speed_args, write_speed_part
from benchmark.speed_banks import bank_configs, measure_banks
from benchmark.speed_iteration import measure_iteration
from benchmark.speed_losses import LOSS_SHAPES, measure_losses
from benchmark.spml_setups import SIZES


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=30,
                        help='interleaved rounds of the loss timings')
    parser.add_argument('--iteration-rounds', type=int, default=5,
                        help='interleaved rounds of the training iterations')
    parser.add_argument('--batch-size', type=int, default=8,
                        help='batch of the training iteration')
    parser.add_argument('--img-size', type=int, default=224,
                        help='image side of the training iteration')
    parser.add_argument('--bank-repeats', type=int, default=3)
    parser.add_argument('--bank-scale', type=float, default=1.,
                        help='fraction of the COCO / NUS-WIDE sample counts')
    parser.add_argument('--quick', action='store_true',
                        help='a smoke run: 3 rounds, 64 px, batch 2, 1%% of '
                        'the bank scale; not meaningful')
    args = parse_speed_args(parser)
    if args.quick:
        args.rounds, args.iteration_rounds, args.bank_repeats = 3, 1, 1
        args.img_size, args.batch_size, args.bank_scale = 64, 2, 0.01
    return args


def main():
    args = parse_args()
    progress = ProgressBar(
        len(LOSS_SHAPES) * args.rounds + args.iteration_rounds * 5 +
        len(SIZES) * args.bank_repeats * len(bank_configs()))
    parts = dict(
        losses=measure_losses(args.rounds, progress),
        iteration=measure_iteration(args.batch_size, args.img_size,
                                    args.iteration_rounds, progress),
        banks=measure_banks(args.bank_scale, args.bank_repeats, progress))
    print()
    for part, results in parts.items():
        # the page is rendered after each part; the last one has them all
        text = write_speed_part(args.out_dir, part, results, sys.argv)
    print(text)
    report_written(args.out_dir,
                   [f'speed_{part}.json' for part in parts] + ['speed.md'])


if __name__ == '__main__':
    main()
