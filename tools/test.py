"""Test a checkpoint with an SPML config (the interface of MMPretrain's test).

Reports mAP and the label sets' precision, recall and F1
(:class:`~spml_mm.evaluation.SPMLLabelSetMetric`) at the decision of the
thresholds file beside the checkpoint (``tools/calibrate.py``) when there is
one, else ``--thresholds FILE``, else the head's ``thr``.
"""
import argparse
import os.path as osp
import sys

from mmengine.config import Config

from spml_mm.apis import (apply_thresholds, checkpoint_classes,
                          default_thresholds_path)
from spml_mm.apis.thresholds import describe, load_thresholds
from spml_mm.utils import (apply_launch_args, drop_disabled_hooks,
                           parse_launch_args, run_runner)


def parse_args():
    parser = argparse.ArgumentParser(description='Test an SPML model')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--work-dir', help='the dir to save logs and results')
    parser.add_argument(
        '--out', help='dump the per-sample predictions to this pickle file')
    parser.add_argument(
        '--out-scores',
        help='write the raw scores and labels to this .npz (plain arrays)')
    parser.add_argument(
        '--amp', action='store_true', help='mixed precision inference')
    parser.add_argument(
        '--thresholds', default='auto',
        help='thresholds file of tools/calibrate.py, or "none" (default: '
        'the one beside the checkpoint, if any)')
    return parse_launch_args(parser, 'test_dataloader.batch_size=64')


def merge_args(cfg, args):
    """Merge command-line arguments into the config."""
    apply_launch_args(cfg, args)
    cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg.fp16 = True
    evaluators = (cfg.test_evaluator if isinstance(cfg.test_evaluator, list)
                  else [cfg.test_evaluator])
    if not any(e.get('type') == 'SPMLLabelSetMetric' for e in evaluators):
        evaluators = [*evaluators, dict(type='SPMLLabelSetMetric')]
    if args.out:
        evaluators.append(dict(type='DumpResults', out_file_path=args.out))
    if args.out_scores:
        evaluators.append(dict(type='SPMLScoreDump',
                               out_file=args.out_scores))
    cfg.test_evaluator = evaluators
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    # after --cfg-options, which may set num_workers=0
    loader = cfg.test_dataloader
    if not loader.get('num_workers'):
        loader.persistent_workers = False
    drop_disabled_hooks(cfg)
    set_thresholds(cfg, args)
    return cfg


def set_thresholds(cfg, args):
    """The head decides by ``--thresholds`` or the file beside the
    checkpoint; says which."""
    path = args.thresholds
    if path == 'auto':
        found = default_thresholds_path(args.checkpoint)
        path = found if osp.isfile(found) else 'none'
    if path == 'none':
        return
    classes = checkpoint_classes(args.checkpoint, cfg.model.head.num_classes)
    try:
        apply_thresholds(cfg, path, classes, args.checkpoint)
    except ValueError as err:
        sys.exit(str(err))
    print(f'label sets decided by the thresholds of '
          f'{describe(load_thresholds(path), path)}')


def main():
    args = parse_args()
    run_runner(merge_args(Config.fromfile(args.config), args), 'test')


if __name__ == '__main__':
    main()
