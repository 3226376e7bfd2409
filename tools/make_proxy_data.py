"""Generate a proxy benchmark with the label statistics of VOC or COCO.

Scenes of textured objects (with ``--classes glyphs``: Pillow's font
characters and scikit-learn's handwritten digits) whose label sets match the
real dataset's classes, positives per image, class frequencies and
co-occurring class groups, written in the
interchange format of ``tools/prepare_spml.py`` with the protocol's observed
positives. Prints the measured statistics beside the targets.

Example:
    python tools/make_proxy_data.py --like voc --out-dir data/proxy-voc
    python tools/make_proxy_data.py --like coco --fraction 0.1 \
        --out-dir data/proxy-coco
"""
import argparse
import json
import os
import os.path as osp

from spml_mm.benchmarks.proxy import (format_proxy_summary,
                                      make_proxy_dataset, split_sizes)


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
    args = parser.parse_args()
    out_dir = args.out_dir or f'data/proxy-{args.like}'
    sizes = split_sizes(args.like, args.fraction)
    print(f'{args.like}-like proxy, fraction {args.fraction}: '
          f'{sizes["train"]} + {sizes["val"]} images of '
          f'{args.image_size} px into {out_dir}')
    os.makedirs(out_dir, exist_ok=True)
    summary = make_proxy_dataset(
        out_dir, args.like, fraction=args.fraction,
        image_size=args.image_size, seed=args.seed,
        observe_seed=args.observe_seed, classes=args.classes)
    summary['arguments'] = vars(args)
    with open(osp.join(out_dir, 'statistics.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    print()
    print(format_proxy_summary(args.like, summary))


if __name__ == '__main__':
    main()
