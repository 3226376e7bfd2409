"""Turn an official dataset download into the SPML interchange format.

Writes formatted_{train,val}_{images,labels,labels_obs}.npy and classes.txt
into OUT and links OUT/images to the image folder, e.g.

    python tools/prepare_spml.py voc --data-root /datasets/VOCtrainval \\
        --out-dir data/voc

The expected layout of each dataset is in docs/user_guides/datasets.md and in the
error raised when a file is missing.

L48 (real single positives, partial labels as released, no protocol draw)
becomes train.json and test.json in the custom json layout
(SPMLMultiLabelDataset, configs/an/resnet50_l48.py):

    python tools/prepare_spml.py l48 --data-root /datasets/L48 \\
        --out-dir data/l48 [--variant target|geo|checklist|clip]
"""
import argparse

from spml_mm.datasets.l48 import L48_VARIANTS, convert_l48, format_l48_summary
from spml_mm.datasets.prepare import (OFFICIAL_PARSERS, format_summary,
                                      prepare_official)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('dataset', choices=sorted([*OFFICIAL_PARSERS, 'l48']))
    parser.add_argument(
        '--data-root', required=True, help='the extracted official download')
    parser.add_argument(
        '--out-dir', required=True, help='output folder, e.g. data/voc')
    parser.add_argument(
        '--seed',
        type=int,
        default=1200,
        help='seed of the observed labels (observe_uniform); default 1200')
    parser.add_argument(
        '--check-images',
        action='store_true',
        help='decode every image and stop at the first unreadable one')
    parser.add_argument(
        '--variant',
        choices=L48_VARIANTS,
        default='target',
        help='l48 only: how the training clips are observed: the asset\'s '
        'target species as the one positive (target, default), with the '
        'negatives of the geographic prior (geo) or of the checklist '
        '(checklist), or each clip\'s released labels (clip)')
    args = parser.parse_args()
    if args.dataset == 'l48':
        print(format_l48_summary(
            convert_l48(args.data_root, args.out_dir, args.variant)))
        print(f'written to {args.out_dir}')
        return
    summary = prepare_official(args.dataset, args.data_root, args.out_dir,
                               args.seed, args.check_images)
    print(format_summary(args.dataset, summary))
    print(f'written to {args.out_dir}')


if __name__ == '__main__':
    main()
