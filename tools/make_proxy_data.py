"""Generate a proxy benchmark with the label statistics of VOC or COCO.

Scenes of textured objects (with ``--classes glyphs``: Pillow's font
characters and scikit-learn's handwritten digits) whose label sets match the
real dataset's classes, positives per image, class frequencies and
co-occurring class groups, written in the
interchange format of ``tools/prepare_spml.py`` with the protocol's observed
positives, and each label's object area
(``formatted_{train,val}_salience.npy``, which ``observe='largest'`` reads).
Prints the measured statistics beside the targets and writes
them to ``<out-dir>/statistics.json``; ``--record FILE`` also merges them into
FILE under the out-dir's name, with the command and the seconds it took (the
documentation's ``docs/results/label_stats.json``).

Example:
    python tools/make_proxy_data.py --like voc --out-dir data/proxy-voc
    python tools/make_proxy_data.py --like coco --fraction 0.1 \
        --out-dir data/proxy-coco --record docs/results/label_stats.json
"""
import argparse
import json
import os
import os.path as osp
import sys
import time

from spml_mm.benchmarks.proxy import (format_proxy_summary,
                                      make_proxy_dataset, record_statistics,
                                      split_sizes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--like', choices=['voc', 'coco'], required=True)
    parser.add_argument('--out-dir', default=None,
                        help='defaults to data/proxy-<like>')
    parser.add_argument('--fraction', type=float, default=1.,
                        help='share of the real split sizes (default 1: '
                        'VOC 5,717 + 5,823, COCO 82,081 + 40,137 images)')
    parser.add_argument('--classes', choices=['textures', 'glyphs'],
                        default='textures',
                        help='coloured texture classes (default) or the '
                        'glyph classes of the first proxy')
    parser.add_argument('--image-size', type=int, default=128)
    parser.add_argument('--seed', type=int, default=0,
                        help='seed of the labels and scenes')
    parser.add_argument('--observe-seed', type=int, default=1200,
                        help='seed of the observed positives (protocol)')
    parser.add_argument('--record', default=None, metavar='FILE',
                        help='merge the statistics into this json too, '
                        'under the out-dir\'s name')
    args = parser.parse_args()
    out_dir = args.out_dir or f'data/proxy-{args.like}'
    sizes = split_sizes(args.like, args.fraction)
    print(f'{args.like}-like proxy, fraction {args.fraction}: '
          f'{sizes["train"]} + {sizes["val"]} images of '
          f'{args.image_size} px into {out_dir}')
    os.makedirs(out_dir, exist_ok=True)
    start = time.perf_counter()
    summary = make_proxy_dataset(
        out_dir, args.like, fraction=args.fraction,
        image_size=args.image_size, seed=args.seed,
        observe_seed=args.observe_seed, classes=args.classes)
    summary['seconds'] = time.perf_counter() - start
    summary['arguments'] = vars(args)
    with open(osp.join(out_dir, 'statistics.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    if args.record:
        record_statistics(args.record, osp.basename(osp.normpath(out_dir)),
                          summary, ' '.join(['python', *sys.argv]))
    print()
    print(format_proxy_summary(args.like, summary))


if __name__ == '__main__':
    main()
