"""Test a checkpoint with an SPML config (the interface of MMPretrain's test).
"""
import argparse
import os
import os.path as osp

from mmengine.config import Config, DictAction
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from spml_mm.utils import (destroy_distributed, explain_distributed_timeout,
                           setup_cpu_distributed)

#: The default hooks MMEngine itself removes when set to None.
MMENGINE_DEFAULT_HOOKS = ('runtime_info', 'timer', 'sampler_seed', 'logger',
                          'param_scheduler', 'checkpoint')


def parse_args():
    parser = argparse.ArgumentParser(description='Test an SPML model')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--work-dir', help='the dir to save logs and results')
    parser.add_argument(
        '--out', help='dump the per-sample predictions to this pickle file')
    parser.add_argument(
        '--amp', action='store_true', help='mixed precision inference')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override config entries, e.g. test_dataloader.batch_size=64')
    parser.add_argument(
        '--launcher',
        choices=['none', 'pytorch', 'slurm', 'mpi'],
        default='none',
        help='job launcher')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args


def merge_args(cfg, args):
    """Merge command-line arguments into the config."""
    cfg.launcher = args.launcher
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs',
                                osp.splitext(osp.basename(args.config))[0])
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
    # MMEngine accepts None only for its own default hooks; None switches
    # the plugin's off too (e.g. default_hooks.divergence_guard=None)
    for name in [k for k, v in cfg.get('default_hooks', {}).items()
                 if v is None and k not in MMENGINE_DEFAULT_HOOKS]:
        cfg.default_hooks.pop(name)
    return cfg


def main():
    args = parse_args()
    cfg = merge_args(Config.fromfile(args.config), args)
    setup_cpu_distributed(cfg, args.launcher)
    runner = (Runner.from_cfg(cfg)
              if 'runner_type' not in cfg else RUNNERS.build(cfg))
    with explain_distributed_timeout(cfg):
        runner.test()
    destroy_distributed()


if __name__ == '__main__':
    main()
