"""Generate the multi-digit demo dataset (no download needed).

``--record FILE`` merges each split's images, positives per image and AN's
false-negative rate into FILE under the out-dir's name, with the command and
the seconds it took (the documentation's ``docs/results/label_stats.json``).
"""
import argparse
import os.path as osp
import sys
import time

from spml_mm.benchmarks.proxy import record_statistics
from spml_mm.datasets import make_demo_dataset
from spml_mm.datasets.demo import CLASSES


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out-dir', default='data/demo')
    parser.add_argument('--num-train', type=int, default=4000)
    parser.add_argument('--num-test', type=int, default=2000)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--record', default=None, metavar='FILE',
                        help='merge the statistics into this json too, '
                        "under the out-dir's name")
    args = parser.parse_args()
    start = time.perf_counter()
    summary = make_demo_dataset(
        args.out_dir, args.num_train, args.num_test, seed=args.seed)
    for split, info in summary.items():
        print(f'\nofficial {split} split: {info["images"]} images, '
              f'{info["avg_positives"]:.2f} positives per image')
    print(f'written to {args.out_dir}')
    if args.record:
        for info in summary.values():
            # the share of AN's assumed negatives that are positive
            info['an_false_negative_rate'] = (info['avg_positives'] - 1) / (
                len(CLASSES) - 1)
        summary.update(num_classes=len(CLASSES),
                       seconds=time.perf_counter() - start)
        record_statistics(args.record,
                          osp.basename(osp.normpath(args.out_dir)), summary,
                          ' '.join(['python', *sys.argv]))


if __name__ == '__main__':
    main()
