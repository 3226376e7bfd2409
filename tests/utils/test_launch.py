"""The start-up shared by tools/train.py and tools/test.py."""
import argparse
import os

from mmengine.config import Config

from spml_mm.utils import (apply_launch_args, drop_disabled_hooks,
                           parse_launch_args)


def test_parse_launch_args_adds_the_shared_options_and_exports_local_rank(
        monkeypatch):
    # setenv first: the variable is restored (or removed) after the test
    monkeypatch.setenv('LOCAL_RANK', '')
    monkeypatch.delenv('LOCAL_RANK')
    monkeypatch.setattr('sys.argv', [
        'train.py', 'a.py', '--cfg-options', 'train_cfg.max_epochs=2',
        'model.head.loss.w=[1,2]', '--launcher', 'pytorch', '--local-rank',
        '3'
    ])
    parser = argparse.ArgumentParser()
    parser.add_argument('config')
    args = parse_launch_args(parser, 'train_cfg.max_epochs=2')
    assert args.config == 'a.py' and args.launcher == 'pytorch'
    assert args.cfg_options == {
        'train_cfg.max_epochs': 2,
        'model.head.loss.w': [1, 2]
    }
    assert args.local_rank == 3
    assert os.environ['LOCAL_RANK'] == '3'


def test_work_dir_from_the_option_then_the_config_then_the_config_name():
    def work_dir(option, configured):
        cfg = Config(dict(work_dir=configured) if configured else {})
        apply_launch_args(
            cfg,
            argparse.Namespace(config='configs/an/an_vgg11bn_demo.py',
                               work_dir=option, launcher='slurm'))
        assert cfg.launcher == 'slurm'
        return cfg.work_dir

    assert work_dir('w', 'c') == 'w'
    assert work_dir(None, 'c') == 'c'
    assert work_dir(None, None) == './work_dirs/an_vgg11bn_demo'


def test_drop_disabled_hooks_leaves_mmengines_none_to_mmengine():
    cfg = Config(dict(default_hooks=dict(
        timer=None, logger=dict(type='LoggerHook'), divergence_guard=None)))
    drop_disabled_hooks(cfg)
    assert cfg.default_hooks == dict(timer=None,
                                     logger=dict(type='LoggerHook'))
