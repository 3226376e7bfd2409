"""Choose a trained model's label-set thresholds on its validation split,
without full labels, and write them beside the checkpoint.

    python tools/calibrate.py CONFIG CHECKPOINT --positives-per-image 2.1
    python tools/calibrate.py CONFIG CHECKPOINT --method conformal --alpha 0.1

Scores the validation split (``val_dataloader``) and calibrates on the
labels a single-positive protocol observes there (``val_labels='observed'``:
one positive per image, everything else unknown); ``--method f1`` instead
reads the fully labelled validation images (the config's ``val_labels`` and
``val_full_subset``). Writes ``<checkpoint>_thresholds.json`` (or ``--out``),
which ``tools/predict.py``, ``tools/test.py`` and ``tools/export_onnx.py``
then use, prints each class's threshold and the observed positives it rests
on, and refuses a class with too few of them, naming it, before writing
anything. Methods: see docs/user_guides/label_sets.md.
"""
import argparse
import sys

import numpy as np
from mmengine.config import Config

from spml_mm.apis import (METHODS, calibrate, default_thresholds_path,
                          load_model, save_thresholds, score_split)
from spml_mm.evaluation import CalibrationError
from spml_mm.utils import add_cfg_options


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument(
        '--method', choices=METHODS,
        help='how the decision is chosen (default: prior when '
        '--positives-per-image is given, else conformal; the label-sets '
        'results page compares them)')
    parser.add_argument(
        '--alpha', type=float, default=0.1,
        help='conformal and global: share of observed positives allowed '
        'below the threshold, in (0, 1) (default 0.1: recall >= 90%%)')
    parser.add_argument(
        '--positives-per-image', type=float,
        help='prior and topk: the mean number of labels per image')
    parser.add_argument('--out', help='the thresholds file (default: '
                        '<checkpoint>_thresholds.json)')
    parser.add_argument('--device', help='cpu or cuda (default: cuda when '
                        'available)')
    add_cfg_options(parser, 'val_dataloader.batch_size=64')
    args = parser.parse_args(argv)
    if args.method is None:
        args.method = 'conformal' if args.positives_per_image is None \
            else 'prior'
    if args.method in ('conformal', 'global') and not 0 < args.alpha < 1:
        parser.error(f'--alpha must be in (0, 1), got {args.alpha}')
    if args.positives_per_image is not None and not (
            args.positives_per_image >= 1):
        parser.error('--positives-per-image must be >= 1, got '
                     f'{args.positives_per_image}')
    return args


def main(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    cfg.model.head.pop('thresholds', None)
    if args.method in ('prior', 'topk') and args.positives_per_image is None:
        sys.exit(f'--method {args.method} needs --positives-per-image M, the '
                 'mean number of labels per image of your data (single '
                 'positives do not tell it)')
    # the labels are those a single-positive protocol observes, unless the
    # F1 reference reads the fully labelled images
    labels = {} if args.method == 'f1' else dict(val_labels='observed',
                                                 val_full_subset=None)
    model = load_model(cfg, args.checkpoint, args.device)
    print(f'scoring the validation split with {args.checkpoint}')
    split = score_split(model, cfg, 'val', **labels)
    try:
        record = calibrate(args.method, split['scores'], split['known'],
                           split['classes'], args.alpha,
                           args.positives_per_image)
    except (CalibrationError, ValueError) as err:
        sys.exit(f'{args.checkpoint}: nothing written: {err}')
    record.update(config=args.config, checkpoint=args.checkpoint)
    out = args.out or default_thresholds_path(args.checkpoint)
    save_thresholds(out, record)
    print(f'\n{"class":<20} {"threshold":>9} {"positives":>9}')
    if 'topk' in record:
        print(f'every image: its {record["topk"]} highest-scoring classes')
    else:
        for c, t, n in zip(record['classes'], record['thresholds'],
                           record['positives']):
            print(f'{c:<20} {t:>9.4f} {n:>9d}')
        kind = 'fully labelled' if args.method == 'f1' else 'observed'
        print(f'{np.sum(record["positives"])} {kind} positives on '
              f'{record["calibration_images"]} validation images')
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
