"""Test a checkpoint with an SPML config (the interface of MMPretrain's test).
"""
import argparse

from mmengine.config import Config

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
        '--amp', action='store_true', help='mixed precision inference')
    return parse_launch_args(parser, 'test_dataloader.batch_size=64')


def merge_args(cfg, args):
    """Merge command-line arguments into the config."""
    apply_launch_args(cfg, args)
    cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg.fp16 = True
    if args.out:
        cfg.test_evaluator = [
            *(cfg.test_evaluator if isinstance(cfg.test_evaluator, list) else
              [cfg.test_evaluator]),
            dict(type='DumpResults', out_file_path=args.out)
        ]
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    # after --cfg-options, which may set num_workers=0
    loader = cfg.test_dataloader
    if not loader.get('num_workers'):
        loader.persistent_workers = False
    drop_disabled_hooks(cfg)
    return cfg


def main():
    args = parse_args()
    run_runner(merge_args(Config.fromfile(args.config), args), 'test')


if __name__ == '__main__':
    main()
