"""Predict the label set of each image with a trained SPML model.

    python tools/predict.py CONFIG CHECKPOINT INPUT... [--out preds.json]

INPUT: image files, folders (their images, recursively) or list files
(``.txt``, one image path per line). The decision is the one
``spml_mm.apis.resolve_decision`` finds and the tool prints
(``decision: ...``): ``--thresholds FILE``, else the one
``tools/calibrate.py`` recorded in the checkpoint (a checkpoint copied alone
keeps it), else a thresholds file beside it, else the head's own (``thr``
0.5); ``--thresholds none`` takes the head's. A decision calibrated for
another model (other classes, weights or config) is refused (``--allow-other-thresholds`` applies it anyway,
saying so), as is a checkpoint that does not fit the config.
Prints each image's classes with their scores; ``--out`` writes them with
every class's score (``.json`` or ``.csv``): never over one of the run's
inputs, and over an existing file only when this tool wrote it or with
``--overwrite``. An unreadable image, or one far larger than the model
takes (``--max-pixels``), is named and the others are still predicted
(exit status 1 if any failed).
"""
import argparse
import csv
import io
import json
import os.path as osp
import sys

from mmengine.config import Config
from mmengine.utils import scandir

from spml_mm.apis import SPMLInferencer
from spml_mm.apis.model import resolve_device
from spml_mm.apis.thresholds import THRESHOLDS_HELP, decision_file
from spml_mm.utils import (DamagedCheckpointError, add_cfg_options,
                           check_output_file, write_atomically)

#: Image file endings a folder is searched for.
IMAGE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.bmp', '.ppm', '.pgm', '.tif',
                  '.tiff', '.webp')
#: The ``format`` of a predictions .json this tool writes.
FORMAT = 'spml-mm predictions 1'
#: The characters that make a path a glob pattern.
GLOB_CHARS = '*?['


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('inputs', nargs='+', metavar='INPUT',
                        help='images, folders or .txt lists of images')
    parser.add_argument(
        '--thresholds', default='auto', help=THRESHOLDS_HELP)
    parser.add_argument(
        '--allow-other-thresholds', action='store_true',
        help='decide by a thresholds file calibrated for other weights or '
        'another config (refused otherwise), with a warning')
    parser.add_argument('--out', help='write the predictions (.json/.csv); '
                        'never over an input, nor over a file this tool did '
                        'not write unless --overwrite')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out this tool did not '
                        'write')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--device', help='cpu or cuda (default: cuda when '
                        'available)')
    parser.add_argument(
        '--max-pixels', type=int,
        help='refuse (name) an image with more pixels, read from its header '
        'before it is decoded (default: 2048 x 2048 when the test pipeline '
        'has no Resize, else 16384 x 16384)')
    add_cfg_options(parser, 'model.head.thr=0.3 (with --thresholds none)')
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error(f'--batch-size must be >= 1, got {args.batch_size}')
    if args.max_pixels is not None and args.max_pixels < 1:
        parser.error(f'--max-pixels must be >= 1, got {args.max_pixels}')
    if args.thresholds not in ('auto', 'none') and not osp.isfile(
            args.thresholds):
        parser.error(f'--thresholds {args.thresholds}: no such file')
    try:
        resolve_device(args.device)
    except ValueError as err:
        parser.error(str(err))
    return args


def predictions_written(path: str) -> bool:
    """Whether ``path`` is a predictions file this tool wrote: a .json of
    its :data:`FORMAT`, or a .csv with its header."""
    if path.lower().endswith('.json'):
        with open(path) as f:
            found = json.load(f)
        return isinstance(found, dict) and found.get('format') == FORMAT
    with open(path, newline='') as f:
        header = next(csv.reader(f), [])
    return header[:2] == ['image', 'labels'] and header[-1:] == ['error']


def expand_inputs(inputs, origins=None):
    """The image paths of files, folders and list files, in order; a
    missing path not named as an image, a glob pattern the shell did not
    expand, and a folder or list without images, are refused.
    ``origins`` (a dict) receives, for each path of a list that does not
    exist, where it was listed."""
    paths = []
    origins = {} if origins is None else origins
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
            for n, p in enumerate(listed, 1):
                path = p if osp.isabs(p) or osp.exists(p) else osp.join(
                    base, p)
                if not osp.exists(path):
                    origins[path] = (
                        f'listed in {item}, line {n}; a relative path is '
                        f'read from the list\'s folder ({base or "."}) or '
                        'the current one')
                paths.append(path)
        elif not osp.exists(item) and any(c in item for c in GLOB_CHARS):
            raise ValueError(
                f'{item}: no such file or folder; a glob pattern is not '
                'expanded by this tool (your shell expands it when it is '
                'not quoted): leave the pattern unquoted, or pass the '
                'folder, which is searched recursively')
        elif osp.exists(item) or item.lower().endswith(IMAGE_SUFFIXES):
            # a missing image is reported with the predictions
            paths.append(item)
        else:
            raise ValueError(f'{item}: no such file or folder')
    return paths


def write_out(path, paths, results, classes, thresholds):
    """Write the predictions to ``path`` (.json or .csv) atomically."""
    if path.lower().endswith('.json'):
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
        write_atomically(
            json.dumps(dict(format=FORMAT, classes=list(classes),
                            thresholds=thresholds,
                            predictions=predictions), indent=1), path)
        return
    f = io.StringIO(newline='')
    writer = csv.writer(f)
    writer.writerow(['image', 'labels', *classes, 'error'])
    for image, r in zip(paths, results):
        if 'error' in r:
            writer.writerow([image, '', *[''] * len(classes), r['error']])
        else:
            writer.writerow([image, ';'.join(r['pred_class']),
                             *[f'{s:.6f}' for s in r['pred_scores']], ''])
    write_atomically(f.getvalue(), path)


def check_out(args) -> str:
    """Refuse an --out that is an input, or an existing file this tool did
    not write (without --overwrite); the line on a replaced file."""
    thresholds = decision_file(args.checkpoint, args.thresholds)
    inputs = [args.config, args.checkpoint, thresholds, *args.inputs]
    return check_output_file(args.out, ('.json', '.csv'), inputs,
                             predictions_written, args.overwrite)


def main(argv=None):
    args = parse_args(argv)
    origins = {}
    try:
        paths = expand_inputs(args.inputs, origins)
        replacing = check_out(args) if args.out else ''
    except ValueError as err:
        sys.exit(str(err))
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    try:
        infer = SPMLInferencer(cfg, args.checkpoint, device=args.device,
                               thresholds=args.thresholds,
                               allow_other=args.allow_other_thresholds,
                               cfg_options=args.cfg_options,
                               max_pixels=args.max_pixels)
    except (ValueError, DamagedCheckpointError) as err:
        sys.exit(str(err))
    for line in infer.warnings:
        print(line)
    print(f'decision: {infer.decision}')
    results = infer(paths, batch_size=args.batch_size)
    for image, r in zip(paths, results):
        if 'error' in r and image in origins:
            r['error'] += f' ({origins[image]})'
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
        if replacing:
            print(replacing)
        write_out(args.out, paths, results, infer.classes, infer.thresholds)
        print(f'wrote {args.out}')
    failed = sum('error' in r for r in results)
    if failed:
        print(f'{failed} of {len(paths)} images could not be read')
        sys.exit(1)


if __name__ == '__main__':
    main()
