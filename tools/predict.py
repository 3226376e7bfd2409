"""Predict the label set of each image with a trained SPML model.

    python tools/predict.py CONFIG CHECKPOINT INPUT... [--out preds.json]

INPUT: image files, folders (their images, recursively) or list files
(``.txt``, one image path per line). The decision is the thresholds file
beside the checkpoint (``<checkpoint>_thresholds.json`` of
``tools/calibrate.py``) when there is one, else ``--thresholds FILE``, else
the head's own (``thr`` 0.5); ``--thresholds none`` ignores the file.
Prints each image's classes with their scores; ``--out`` writes them with
every class's score (``.json`` or ``.csv``). An unreadable image is named
and the others are still predicted (exit status 1 if any failed).
"""
import argparse
import csv
import json
import os
import os.path as osp
import sys

from mmengine.config import Config
from mmengine.utils import scandir

from spml_mm.apis import SPMLInferencer
from spml_mm.utils import add_cfg_options

#: Image file endings a folder is searched for.
IMAGE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.bmp', '.ppm', '.pgm', '.tif',
                  '.tiff', '.webp')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('inputs', nargs='+', metavar='INPUT',
                        help='images, folders or .txt lists of images')
    parser.add_argument(
        '--thresholds', default='auto',
        help='thresholds file of tools/calibrate.py, or "none" (default: '
        'the one beside the checkpoint, if any)')
    parser.add_argument('--out', help='write the predictions (.json/.csv)')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--device', help='cpu or cuda (default: cuda when '
                        'available)')
    add_cfg_options(parser, 'model.head.thr=0.3')
    args = parser.parse_args(argv)
    if args.out and not args.out.endswith(('.json', '.csv')):
        parser.error(f'--out must end with .json or .csv, got {args.out}')
    if args.thresholds not in ('auto', 'none') and not osp.isfile(
            args.thresholds):
        parser.error(f'--thresholds {args.thresholds}: no such file')
    return args


def expand_inputs(inputs):
    """The image paths of files, folders and list files, in order; a
    missing path not named as an image, and a folder or list without
    images, are refused."""
    paths = []
    for item in inputs:
        if osp.isdir(item):
            found = sorted(
                osp.join(item, f)
                for f in scandir(item, IMAGE_SUFFIXES, recursive=True,
                                 case_sensitive=False))
            if not found:
                raise ValueError(f'{item}: a folder without images (endings '
                                 f'{", ".join(IMAGE_SUFFIXES)})')
            paths += found
        elif item.endswith('.txt') and osp.isfile(item):
            with open(item) as f:
                listed = [line.strip() for line in f if line.strip()]
            if not listed:
                raise ValueError(f'{item}: an empty list of images')
            base = osp.dirname(item)
            paths += [p if osp.isabs(p) or osp.exists(p) else osp.join(
                base, p) for p in listed]
        elif osp.exists(item) or item.lower().endswith(IMAGE_SUFFIXES):
            # a missing image is reported with the predictions
            paths.append(item)
        else:
            raise ValueError(f'{item}: no such file or folder')
    return paths


def write_out(path, paths, results, classes, thresholds):
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    if path.endswith('.json'):
        predictions = []
        for image, r in zip(paths, results):
            entry = dict(image=image)
            if 'error' in r:
                entry['error'] = r['error']
            else:
                entry.update(labels=r['pred_class'],
                             label_scores=r['pred_score'],
                             scores=[float(s) for s in r['pred_scores']])
            predictions.append(entry)
        with open(path, 'w') as f:
            json.dump(dict(classes=list(classes), thresholds=thresholds,
                           predictions=predictions), f, indent=1)
        return
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['image', 'labels', *classes, 'error'])
        for image, r in zip(paths, results):
            if 'error' in r:
                writer.writerow([image, '', *[''] * len(classes), r['error']])
            else:
                writer.writerow([image, ';'.join(r['pred_class']),
                                 *[f'{s:.6f}' for s in r['pred_scores']],
                                 ''])


def main(argv=None):
    args = parse_args(argv)
    try:
        paths = expand_inputs(args.inputs)
    except ValueError as err:
        sys.exit(str(err))
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    try:
        infer = SPMLInferencer(cfg, args.checkpoint, device=args.device,
                               thresholds=args.thresholds)
    except ValueError as err:
        sys.exit(str(err))
    print('decision: ' + (f'thresholds {infer.thresholds}'
                          if infer.thresholds else
                          f'the head\'s (thr={infer.model.head.thr}, '
                          f'topk={infer.model.head.topk})'))
    results = infer(paths, batch_size=args.batch_size)
    print()
    for image, r in zip(paths, results):
        if 'error' in r:
            print(f'{image}: cannot be read: {r["error"]}')
        else:
            labels = ', '.join(f'{c} ({s:.2f})'
                               for c, s in zip(r['pred_class'],
                                               r['pred_score']))
            print(f'{image}: {labels or "(no label)"}')
    if args.out:
        write_out(args.out, paths, results, infer.classes, infer.thresholds)
        print(f'wrote {args.out}')
    failed = sum('error' in r for r in results)
    if failed:
        print(f'{failed} of {len(paths)} images could not be read')
        sys.exit(1)


if __name__ == '__main__':
    main()
