"""Turn an official dataset download into the SPML interchange format.

Writes formatted_{train,val}_{images,labels,labels_obs}.npy and classes.txt
into OUT and links OUT/images to the image folder, e.g.

    python tools/prepare_spml.py voc --data-root /datasets/VOCtrainval \\
        --out-dir data/voc

The expected layout of each dataset is in docs/user_guides/datasets.md and in the
error raised when a file is missing.
"""
import argparse

from spml_mm.datasets.prepare import (OFFICIAL_PARSERS, format_summary,
                                      prepare_official)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('dataset', choices=sorted(OFFICIAL_PARSERS))
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
    args = parser.parse_args()
    summary = prepare_official(args.dataset, args.data_root, args.out_dir,
                               args.seed, args.check_images)
    print(format_summary(args.dataset, summary))
    print(f'written to {args.out_dir}')


if __name__ == '__main__':
    main()
