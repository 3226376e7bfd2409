"""End-to-end runs of tools/ on a tiny demo dataset."""
import argparse
import glob
import importlib.util
import os
import os.path as osp
import re
import shutil
import socket
import subprocess

import pytest
import torch
from mmengine.config import Config

from tests.conftest import PYTHON, REPO, run_tool

CONFIG = 'configs/an/an_vgg11bn_demo.py'


def tiny_options(data_root, epochs):
    return [
        '--cfg-options', f'train_cfg.max_epochs={epochs}',
        f'train_dataloader.dataset.data_root={data_root}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        'randomness.seed=0', 'randomness.deterministic=True'
    ]


@pytest.fixture(scope='module')
def one_epoch(tiny_demo, tmp_path_factory):
    """One epoch without validation, which several tests start from: its
    work dir (copy it before writing to it) and the tool's output."""
    work = str(tmp_path_factory.mktemp('one_epoch') / 'run')
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work,
                    '--no-validate'] + tiny_options(tiny_demo, 1))
    return work, out


@pytest.mark.slow
def test_mmengine_runner_trains_and_tests(tiny_demo, tmp_path):
    work = str(tmp_path / 'run')
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work] +
                   tiny_options(tiny_demo, 1))
    assert 'SPMLDataset train: 128 images, 10 classes' in out
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP: \d+', out)
    best = glob.glob(osp.join(work, 'best_spml_mAP_epoch_1.pth'))
    assert best, os.listdir(work)
    out = run_tool([PYTHON, 'tools/test.py', CONFIG, best[0], '--work-dir',
                    work, '--out', str(tmp_path / 'preds.pkl')] +
                   tiny_options(tiny_demo, 1))
    found = re.search(r'Epoch\(test\).*spml/mAP: ([\d.]+)', out)
    assert found and 0 < float(found.group(1)) <= 100
    assert osp.getsize(tmp_path / 'preds.pkl') > 0


@pytest.mark.slow
def test_resume_continues_to_the_same_weights(tiny_demo, one_epoch,
                                              tmp_path):
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', full,
              '--no-validate'] + tiny_options(tiny_demo, 2))
    shutil.copytree(one_epoch[0], part)
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', part,
                    '--no-validate', '--resume'] + tiny_options(tiny_demo, 2))
    assert 'resumed epoch: 1' in out
    a = torch.load(osp.join(full, 'epoch_2.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_2.pth'), weights_only=True)
    assert b['meta']['epoch'] == 2
    for key, value in a['state_dict'].items():
        torch.testing.assert_close(b['state_dict'][key], value)
    state_a = a['optimizer']['state']
    assert state_a and b['optimizer']['state'][0]['step'] == state_a[0][
        'step']


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_process_gloo_training(tiny_demo, tmp_path):
    work = str(tmp_path / 'dist')
    env = dict(os.environ, PORT=str(free_port()), PYTHON=PYTHON)
    out = run_tool(['bash', 'tools/dist_train.sh', CONFIG, '2', '--work-dir',
                    work] + tiny_options(tiny_demo, 1), env=env)
    assert 'Distributed training: True' in out
    # 128 images / (2 ranks x 32) = 2 iterations per rank and epoch
    assert re.search(r'Epoch\(train\) \[1\]\[2/2\]', out)
    assert osp.isfile(osp.join(work, 'epoch_1.pth'))
    env['PORT'] = str(free_port())
    out = run_tool(['bash', 'tools/dist_test.sh', CONFIG,
                    osp.join(work, 'epoch_1.pth'), '2', '--work-dir', work] +
                   tiny_options(tiny_demo, 1), env=env)
    assert re.search(r'Epoch\(test\).*spml/mAP', out)


@pytest.mark.slow
def test_head_and_dataset_disagree(tiny_demo, tmp_path):
    with pytest.raises(pytest.fail.Exception,
                       match=r'model.head.num_classes=7 but the train '
                       r'dataset \(SPMLDataset\) has 10 classes'):
        run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir',
                  str(tmp_path)] + tiny_options(tiny_demo, 1) +
                 ['model.head.num_classes=7'])


def test_cfg_options_num_workers_zero_turns_persistent_workers_off():
    """``persistent_workers`` follows ``num_workers`` set by --cfg-options."""
    def load(tool):
        spec = importlib.util.spec_from_file_location(
            tool, osp.join(REPO, 'tools', f'{tool}.py'))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    config = osp.join(REPO, 'configs/grloss/resnet50_voc.py')
    options = {f'{split}_dataloader.num_workers': 0
               for split in ('train', 'val', 'test')}
    args = argparse.Namespace(
        config=config, work_dir=None, amp=False, resume=None,
        auto_scale_lr=False, no_pin_memory=False, no_persistent_workers=False,
        no_validate=False, launcher='none', cfg_options=options)
    train_tool = load('train')
    cfg = train_tool.merge_args(Config.fromfile(config), args)
    for split in ('train', 'val', 'test'):
        loader = cfg[f'{split}_dataloader']
        assert loader.num_workers == 0 and not loader.persistent_workers
    # without the option the base config's workers stay persistent
    args.cfg_options = None
    cfg = train_tool.merge_args(Config.fromfile(config), args)
    assert cfg.train_dataloader.persistent_workers

    args = argparse.Namespace(
        config=config, checkpoint='x.pth', work_dir=None, amp=False,
        out=None, out_scores=None, thresholds='none', launcher='none',
        allow_other_thresholds=False,
        cfg_options={'test_dataloader.num_workers': 0})
    cfg = load('test').merge_args(Config.fromfile(config), args)
    assert not cfg.test_dataloader.persistent_workers


def test_none_switches_a_plugin_default_hook_off():
    """MMEngine asserts on None for hooks it does not know; the tools drop
    them, and leave None on MMEngine's own hooks (which it removes)."""
    spec = importlib.util.spec_from_file_location(
        'train', osp.join(REPO, 'tools', 'train.py'))
    train_tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_tool)
    config = osp.join(REPO, 'configs/an/an_vgg11bn_demo.py')
    args = argparse.Namespace(
        config=config, work_dir=None, amp=False, resume=None,
        auto_scale_lr=False, no_pin_memory=False, no_persistent_workers=False,
        no_validate=False, launcher='none', cfg_options={
            'default_hooks.divergence_guard': None,
            'default_hooks.timer': None})
    cfg = train_tool.merge_args(Config.fromfile(config), args)
    assert 'divergence_guard' not in cfg.default_hooks
    assert cfg.default_hooks.timer is None
    assert cfg.default_hooks.sync_norm_buffers.type == \
        'SPMLSyncNormBuffersHook'


@pytest.mark.slow
def test_reliability_hooks_leave_single_process_results_unchanged(
        tiny_demo, one_epoch, tmp_path):
    """The divergence guard (which measures the gradient norm in the
    optimizer wrapper) and the norm-statistics sync change nothing in a
    single-process run: same weights and optimizer state, bit for bit."""
    plain = str(tmp_path / 'plain')
    run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', plain,
              '--no-validate'] + tiny_options(tiny_demo, 1) +
             ['default_hooks.divergence_guard=None',
              'default_hooks.sync_norm_buffers=None'])
    guarded, out = one_epoch  # the config's hooks
    assert 'grad_norm' in out  # measured and logged
    a = torch.load(osp.join(plain, 'epoch_1.pth'), weights_only=True)
    b = torch.load(osp.join(guarded, 'epoch_1.pth'), weights_only=True)
    torch.testing.assert_close(b['state_dict'], a['state_dict'], rtol=0,
                               atol=0)
    torch.testing.assert_close(b['optimizer']['state'],
                               a['optimizer']['state'], rtol=0, atol=0)


def run_failing(args):
    """Run a tool that must fail; its output."""
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode != 0, proc.stdout[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_misuse_is_refused_with_what_to_do(tiny_demo, one_epoch, tmp_path):
    """A checkpoint of another architecture in tools/test.py, a new run over
    an earlier run's checkpoints, a damaged checkpoint and max_epochs=0 are
    refused with a message saying what differs or what to do."""
    work = str(tmp_path / 'run')
    options = tiny_options(tiny_demo, 1)
    shutil.copytree(one_epoch[0], work)
    ckpt = osp.join(work, 'epoch_1.pth')
    # a VGG-11 checkpoint under a VGG-13 config
    vgg13 = ['model.backbone.depth=13']
    # tools/test.py's logs beside the test, not in ./work_dirs
    test_tool = [PYTHON, 'tools/test.py', CONFIG, '--work-dir',
                 str(tmp_path / 'test')]
    out = run_failing(test_tool + [ckpt] + options + vgg13)
    assert f'CheckpointMismatchError: checkpoint {ckpt} does not fit' in out
    assert 'weights of the model are not in the checkpoint' in out
    assert 'Epoch(test)' not in out
    out = run_tool(test_tool + [ckpt] + options + vgg13 +
                   ['load_strict=False'])
    assert 'load_strict=False: ' in out and 'Epoch(test)' in out
    # a second run in the same work dir without --resume
    out = run_failing([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work]
                      + options)
    assert f'WorkDirInUseError: {work} holds the checkpoints of an ' \
        'earlier run (last_checkpoint, epoch_1.pth)' in out
    # a truncated checkpoint, with the intact one beside it
    damaged = osp.join(work, 'epoch_2.pth')
    with open(ckpt, 'rb') as f, open(damaged, 'wb') as g:
        g.write(f.read()[:1000])
    out = run_failing(test_tool + [damaged] + options)
    assert f'checkpoint {damaged} is damaged' in out
    assert f'tools/train.py CONFIG --resume {ckpt}' in out
    out = run_failing([PYTHON, 'tools/train.py', CONFIG, '--work-dir',
                       str(tmp_path / 'zero')] + options +
                      ['train_cfg.max_epochs=0'])
    assert 'train_cfg.max_epochs=0: it must be an integer >= 1' in out
