"""Generate the multi-digit demo dataset (no download needed).

Generating into a folder that holds a dataset replaces its images; a
teacher score file under ``<out-dir>/teacher_scores/`` whose images changed
is named with the command that writes it again (training refuses it).

``--record FILE`` merges each split's images, positives per image and AN's
false-negative rate into FILE under the out-dir's name, with the command and
the seconds it took (the documentation's ``docs/results/label_stats.json``).
"""
import argparse
import glob
import os.path as osp
import sys
import time

from spml_mm.benchmarks.proxy import record_statistics
from spml_mm.datasets import make_demo_dataset
from spml_mm.datasets.demo import CLASSES
from spml_mm.datasets.teacher_scores import (TeacherScoreError,
                                             image_fingerprint,
                                             read_teacher_scores,
                                             rewrite_command)


def stale_teacher_files(data_root):
    """``(file, images changed, images, command)`` of each teacher score
    file under ``data_root/teacher_scores`` that scored images no longer
    there (all of them for a file without image fingerprints)."""
    stale = []
    for path in sorted(glob.glob(osp.join(data_root, 'teacher_scores',
                                          '*.npz'))):
        try:
            table = read_teacher_scores(path)
        except TeacherScoreError:  # not a score file (a partial run's)
            continue
        then = table.get('img_fingerprints') or [None] * len(
            table['img_paths'])
        changed = 0
        for img, fingerprint in zip(table['img_paths'], then):
            try:
                now = image_fingerprint(osp.join(data_root, img))
            except OSError:
                now = None
            changed += now is None or now != fingerprint
        if changed:
            stale.append((path, changed, len(then),
                          rewrite_command(path, table['meta'])))
    return stale


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
    for path, changed, total, command in stale_teacher_files(args.out_dir):
        print(f'warning: {path} scored {changed} of its {total} images '
              'before they were replaced here; training refuses it. Write '
              f'it again with {command}')
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
