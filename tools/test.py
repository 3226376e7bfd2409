"""Test a checkpoint with an SPML config (the interface of MMPretrain's test).

Reports mAP and the label sets' precision, recall and F1
(:class:`~spml_mm.evaluation.SPMLLabelSetMetric`) at the decision
``spml_mm.apis.resolve_decision`` finds: ``--thresholds FILE``, else the one
``tools/calibrate.py`` recorded in the checkpoint, else a thresholds file
beside it, else the head's ``thr``; printed as ``decision: ...``. A
decision calibrated for another model (classes, weights or config) is
refused; ``--allow-other-thresholds`` applies it anyway, saying so.
"""
import argparse
import sys

from mmengine.config import Config

from spml_mm.apis import resolve_decision
from spml_mm.apis.thresholds import THRESHOLDS_HELP
from spml_mm.utils import (DamagedCheckpointError, apply_launch_args,
                           drop_disabled_hooks, parse_launch_args,
                           run_runner)


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
        '--thresholds', default='auto', help=THRESHOLDS_HELP)
    parser.add_argument(
        '--allow-other-thresholds', action='store_true',
        help='decide by a thresholds file calibrated for other weights or '
        'another config (refused otherwise), with a warning')
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
    """The head decides by the decision resolve_decision finds (calibrated
    for this model); says which."""
    try:
        decision = resolve_decision(cfg, args.checkpoint, args.thresholds,
                                    args.allow_other_thresholds,
                                    args.cfg_options)
    except (ValueError, OSError, DamagedCheckpointError) as err:
        sys.exit(str(err))
    for line in decision['warnings']:
        print(line)
    print(f'decision: {decision["line"]}')


def main():
    args = parse_args()
    run_runner(merge_args(Config.fromfile(args.config), args), 'test')


if __name__ == '__main__':
    main()
