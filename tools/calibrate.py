"""Choose a trained model's label-set thresholds on its validation split,
without full labels, and record them in the checkpoint.

    python tools/calibrate.py CONFIG CHECKPOINT
    python tools/calibrate.py CONFIG CHECKPOINT --positives-per-image 2.1
    python tools/calibrate.py CONFIG CHECKPOINT --method conformal --alpha 0.1

By default each class is predicted on the share of images its prior says
(``prior``), with the mean number of labels per image given
(``--positives-per-image``) or, without it, estimated from the scores and
the observed positives, which the tool prints (``estimated labels per
image``, and each class's prior) and records.

Scores the validation split (``val_dataloader``) and calibrates on the
labels a single-positive protocol observes there (``val_labels='observed'``:
one positive per image, everything else unknown); ``--method f1`` instead
reads the fully labelled validation images (the config's ``val_labels`` and
``val_full_subset``). Records the decision (method, thresholds or k,
classes, the estimate, what it was calibrated on) in the checkpoint's
``meta`` (``spml_decision``, beside MMPretrain's ``dataset_meta``): the file
is rewritten in place, atomically, its weights and other keys kept, so that
a copy of the checkpoint alone decides as calibrated, and
``tools/predict.py``, ``tools/test.py``, ``tools/export_onnx.py``, the
inferencer and the TorchServe handler use it (``--no-record`` leaves the
checkpoint as it is). ``--out FILE`` writes the same record as a thresholds
file (json) too, for inspection or ``--thresholds FILE``. Prints each
class's threshold and the observed positives it rests on, and refuses a
class with too few of them, naming it, before writing anything. The record
holds a digest of the checkpoint's weights and of the config's model, and
the readers refuse it for any other model. ``--out`` is never one of the
run's inputs, and replaces an existing file only when it is a thresholds
file or with ``--overwrite``. A checkpoint that does not
fit the config is refused as ``tools/test.py`` refuses it. Methods: see
docs/user_guides/label_sets.md.
"""
import argparse
import sys

import numpy as np
from mmengine.config import Config

from spml_mm.apis import (METHODS, calibrate, load_model, model_identity,
                          record_in_checkpoint, save_thresholds, score_split)
from spml_mm.apis.model import resolve_device
from spml_mm.apis.thresholds import FORMAT
from spml_mm.evaluation import CalibrationError
from spml_mm.evaluation.calibration import impossible_priors
from spml_mm.utils import (DamagedCheckpointError, add_cfg_options,
                           check_output_file, json_with_format,
                           load_checkpoint_safely)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument(
        '--method', choices=METHODS,
        help='how the decision is chosen (default: prior, with '
        '--positives-per-image or its estimate; the label-sets results page '
        'compares them)')
    parser.add_argument(
        '--alpha', type=float, default=0.1,
        help='conformal and global: share of observed positives allowed '
        'below the threshold, in (0, 1) (default 0.1: recall >= 90%%)')
    parser.add_argument(
        '--positives-per-image', type=float,
        help='prior and topk: the mean number of labels per image '
        '(default: estimated from the validation scores and observed '
        'positives)')
    parser.add_argument('--out', help='also write the record as a '
                        'thresholds file (json); never an input, nor an '
                        'existing file other than a thresholds file unless '
                        '--overwrite')
    parser.add_argument(
        '--no-record', action='store_true',
        help='do not record the decision in the checkpoint\'s meta (by '
        'default the checkpoint is rewritten in place, atomically, its '
        'weights untouched); needs --out')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out that is not a '
                        'thresholds file')
    parser.add_argument('--device', help='cpu or cuda (default: cuda when '
                        'available)')
    add_cfg_options(parser, 'val_dataloader.batch_size=64')
    args = parser.parse_args(argv)
    if args.no_record and not args.out:
        parser.error('--no-record writes nothing without --out FILE')
    if args.method is None:
        args.method = 'prior'
    if not 0 < args.alpha < 1:
        parser.error(f'--alpha must be in (0, 1), got {args.alpha}')
    if args.positives_per_image is not None and not (
            args.positives_per_image >= 1):
        parser.error('--positives-per-image must be >= 1, got '
                     f'{args.positives_per_image}')
    try:
        resolve_device(args.device)
    except ValueError as err:
        parser.error(str(err))
    return args


def main(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    cfg.model.head.pop('thresholds', None)
    num_classes = cfg.model.head.num_classes
    if args.positives_per_image is not None and \
            args.positives_per_image > num_classes:
        sys.exit(f'--positives-per-image {args.positives_per_image:g} '
                 f'exceeds the {num_classes} classes of the model: the mean '
                 'number of labels per image is at most the number of '
                 'classes; nothing written')
    out = args.out
    try:
        replacing = out and check_output_file(
            out, ('.json', ), [args.config, args.checkpoint],
            json_with_format(FORMAT), args.overwrite)
        checkpoint = load_checkpoint_safely(args.checkpoint,
                                            map_location='cpu')
        identity = model_identity(cfg, checkpoint)
        model = load_model(cfg, checkpoint, args.device,
                           filename=args.checkpoint)
    except (ValueError, DamagedCheckpointError) as err:
        sys.exit(str(err))
    del checkpoint
    # the labels are those a single-positive protocol observes, unless the
    # F1 reference reads the fully labelled images
    labels = {} if args.method == 'f1' else dict(val_labels='observed',
                                                 val_full_subset=None)
    print(f'scoring the validation split with {args.checkpoint}')
    split = score_split(model, cfg, 'val', **labels)
    try:
        record = calibrate(args.method, split['scores'], split['known'],
                           split['classes'], args.alpha,
                           args.positives_per_image)
    except (CalibrationError, ValueError) as err:
        sys.exit(f'{args.checkpoint}: nothing written: {err}')
    record.update(config=args.config, checkpoint=args.checkpoint,
                  fits=dict(weights_sha256=identity['weights_sha256'],
                            model_sha256=identity['model_sha256']))
    if out:
        if replacing:
            print(replacing)
        save_thresholds(out, record)
    if not args.no_record:
        try:
            record_in_checkpoint(args.checkpoint, record,
                                 identity['weights_sha256'])
        except (OSError, ValueError, DamagedCheckpointError) as err:
            sys.exit(f'{args.checkpoint}: the decision is not recorded: '
                     f'{err}' + (f' (written to {out})' if out else ''))
    priors = record.get('estimated_priors')
    if priors is not None:
        print('\nestimated labels per image: '
              f'{record["estimated_positives_per_image"]:.2f} (from the '
              'scores and observed positives; --positives-per-image M '
              'to give it)')
        bad = impossible_priors(np.array(priors), split['known'])
        if bad.any():
            names = [record['classes'][k] for k in np.flatnonzero(bad)]
            print(f'WARNING: the estimate is too high: for {len(names)} '
                  'classes the scores rank too few positives above the '
                  'negatives to tell the prior, which reached the most '
                  f'any label set allows ({", ".join(names[:10])}); give '
                  '--positives-per-image M from your data\'s description')
    print(f'\n{"class":<20} {"threshold":>9} {"positives":>9}' +
          ('' if priors is None else f' {"est. prior":>10}'))
    if 'topk' in record:
        if priors is not None:
            for c, p in zip(record['classes'], priors):
                print(f'{c:<20} {"":>9} {"":>9} {p:>10.3f}')
        print(f'every image: its {record["topk"]} highest-scoring classes')
    else:
        for k, (c, t, n) in enumerate(
                zip(record['classes'], record['thresholds'],
                    record['positives'])):
            print(f'{c:<20} {t:>9.4f} {n:>9d}' +
                  ('' if priors is None else f' {priors[k]:>10.3f}'))
        kind = 'fully labelled' if args.method == 'f1' else 'observed'
        print(f'{np.sum(record["positives"])} {kind} positives on '
              f'{record["calibration_images"]} validation images')
    how = record['method'] + (f', k = {record["topk"]}'
                              if 'topk' in record else '')
    if not args.no_record:
        print(f'recorded the decision ({how}) in {args.checkpoint}\'s meta '
              '(weights untouched): a copy of the checkpoint alone decides '
              'by it')
    if out:
        print(f'wrote {out}')


if __name__ == '__main__':
    main()
