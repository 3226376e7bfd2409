"""Train a model with an SPML config (the interface of MMPretrain's train)."""
import argparse

from mmengine.config import Config

from spml_mm.utils import (apply_launch_args, check_pretrained_weights,
                           check_runner_setup, check_train_schedule,
                           claim_work_dir, drop_disabled_hooks,
                           parse_launch_args, run_runner)

#: The on/off options, with their help.
SWITCHES = {
    '--amp': 'mixed precision training',
    '--no-validate': 'skip validation during training',
    '--auto-scale-lr': 'scale the learning rate with the total batch size',
    '--no-pin-memory': 'disable pin_memory',
    '--no-persistent-workers': 'disable persistent_workers',
}


def parse_args():
    parser = argparse.ArgumentParser(description='Train an SPML model')
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='the dir to save logs and models')
    parser.add_argument(
        '--resume',
        nargs='?',
        type=str,
        const='auto',
        help='resume from the given checkpoint, or from the latest '
        'checkpoint in the work dir when no path is given')
    parser.add_argument(
        '--resume-weights-only',
        metavar='PATH',
        help='resume epoch, weights and per-sample state from a checkpoint '
        'without (or ignoring) its optimizer and scheduler state, which '
        'start afresh')
    for switch, text in SWITCHES.items():
        parser.add_argument(switch, action='store_true', help=text)
    return parse_launch_args(parser, 'train_cfg.max_epochs=2')


def merge_args(cfg, args):
    """Merge command-line arguments into the config."""
    apply_launch_args(cfg, args)
    if args.amp:
        cfg.optim_wrapper.type = 'AmpOptimWrapper'
        cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')
    if args.resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if getattr(args, 'resume_weights_only', None) is not None:
        if args.resume is not None:
            raise SystemExit('--resume and --resume-weights-only exclude '
                             'each other')
        cfg.resume, cfg.load_from = True, args.resume_weights_only
        cfg.default_hooks.checkpoint.resume_weights_only = True
    if args.auto_scale_lr:
        cfg.auto_scale_lr.enable = True
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    # after --cfg-options, which may set num_workers=0
    for field in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(field)
        if not loader:
            continue
        if args.no_pin_memory:
            loader.pin_memory = False
        if args.no_persistent_workers or not loader.get('num_workers'):
            loader.persistent_workers = False
    if args.no_validate:
        cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
        cfg.default_hooks.checkpoint.save_best = None
    drop_disabled_hooks(cfg)
    return cfg


def main():
    args = parse_args()
    cfg = merge_args(Config.fromfile(args.config), args)
    check_runner_setup(cfg, 'train')  # what this machine cannot run, first
    check_train_schedule(cfg)
    check_pretrained_weights(cfg)
    with claim_work_dir(cfg):
        run_runner(cfg, 'train')


if __name__ == '__main__':
    main()
