"""Kills and resumes through tools/train.py (issue 49): a resumed run ends
as the uninterrupted one does, one best checkpoint is left and named, and
what cannot be resumed is refused with the fix."""
import os
import os.path as osp
import re
import shutil
import signal
import subprocess

import pytest
import torch

from tests.conftest import PYTHON, REPO
from benchmark.faults.harness import FAULT_CONFIG, INJECTOR

AN = 'configs/an/an_vgg11bn_demo.py'
EARLY_STOPPING = ('default_hooks.early_stopping.type=SPMLEarlyStoppingHook',
                  'default_hooks.early_stopping.patience=2')


def train(config, work, data_root, epochs, *args, more=(), env=None):
    """tools/train.py with the fault injector importable: (status, log)."""
    proc = subprocess.run(
        [PYTHON, 'tools/train.py', config, '--work-dir', work, *args,
         '--cfg-options', f'train_cfg.max_epochs={epochs}',
         f'train_dataloader.dataset.data_root={data_root}',
         f'val_dataloader.dataset.data_root={data_root}',
         f'test_dataloader.dataset.data_root={data_root}',
         'randomness.seed=0', 'randomness.deterministic=True', *more],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=f'{osp.dirname(work)}:{REPO}',
                 **(env or {})))
    return proc.returncode, proc.stdout + proc.stderr


def fault_config(folder, base=AN, extra='[]'):
    """``base`` with the fault probe's injector
    (.dev_scripts/benchmark/faults/harness.py), imported from ``folder``."""
    with open(osp.join(folder, 'fault_injector.py'), 'w') as f:
        f.write(INJECTOR)
    path = osp.join(folder, 'fault_config.py')
    with open(path, 'w') as f:
        f.write(FAULT_CONFIG.format(repo=REPO, config=base, extra=extra,
                                    more=''))
    return path


def best_files(work):
    return sorted(f for f in os.listdir(work) if f.startswith('best_'))


@pytest.mark.slow
def test_early_stopping_killed_and_resumed_stops_where_it_would_have(
        tiny_demo, tmp_path):
    """Killed in the epoch after which it stops, the resumed run forgot the
    count of the validation before (its checkpoint is written before that
    validation), trained on and kept another best checkpoint."""
    more = EARLY_STOPPING + ('train_dataloader.dataset.indices=64', )
    full = str(tmp_path / 'full')
    rc, out = train(AN, full, tiny_demo, 12, more=more)
    assert rc == 0, out[-3000:]
    stop = int(re.search(r'Early stopping after epoch (\d+):', out).group(1))
    assert stop < 12
    part = str(tmp_path / 'part')
    killer = fault_config(str(tmp_path),
                          extra=f"[dict(type='KillInTrainHook', epoch={stop})]")
    rc, _ = train(killer, part, tiny_demo, 12, more=more)
    assert rc == -signal.SIGKILL
    rc, out = train(AN, part, tiny_demo, 12, '--resume', more=more)
    assert rc == 0, out[-3000:]
    assert f'Early stopping after epoch {stop}:' in out
    assert f'Epoch(val) [{stop + 1}]' not in out
    assert f'was written before the validation of epoch {stop - 1}' in out
    assert best_files(part) == best_files(full)
    assert len(best_files(full)) == 1


@pytest.mark.slow
def test_a_kill_before_the_previous_best_is_removed(tiny_demo, tmp_path):
    """A kill after epoch 2's checkpoint was written again with the new best
    (write #10, last_checkpoint), before the previous best was removed, left
    two best checkpoints for good, and `ls best_*.pth | head -n 1` chose the
    older. The run's record names the best; --resume removes the other."""
    work = str(tmp_path / 'run')
    rc, _ = train(fault_config(str(tmp_path)), work, tiny_demo, 2,
                  env=dict(FAULT='kill_in_write', FAULT_AT='10'))
    assert rc == -signal.SIGKILL
    assert best_files(work) == ['best_spml_mAP_epoch_1.pth',
                                'best_spml_mAP_epoch_2.pth']
    best = osp.join(work, 'best_spml_mAP_epoch_2.pth')
    named = subprocess.run([PYTHON, 'tools/best_checkpoint.py', work],
                           cwd=REPO, capture_output=True, text=True)
    assert named.stdout == best + '\n'
    rc, out = train(AN, work, tiny_demo, 2, '--resume')
    assert rc == 0, out[-3000:]
    assert best_files(work) == ['best_spml_mAP_epoch_2.pth']
    assert f'Removed {osp.join(work, "best_spml_mAP_epoch_1.pth")}: ' in out


#: The head at 10x the backbone's rate, as in the GR configs: two optimizer
#: groups under GroupedOptimWrapperConstructor (the schedules' constructor),
#: one per parameter under MMEngine's.
HEAD_10X = ('optim_wrapper.paramwise_cfg.custom_keys.head.lr_mult=10.',
            'train_dataloader.dataset.indices=64')


@pytest.fixture(scope='module')
def head_10x_one_epoch(tiny_demo, tmp_path_factory):
    """One epoch of AN with the head at 10x; copy it before writing to it.
    """
    work = str(tmp_path_factory.mktemp('head_10x') / 'run')
    rc, out = train(AN, work, tiny_demo, 1, more=HEAD_10X)
    assert rc == 0, out[-3000:]
    return work


@pytest.mark.slow
def test_resume_under_another_optimizer_constructor_is_refused_with_the_fix(
        tiny_demo, head_10x_one_epoch, tmp_path):
    """It failed in PyTorch with 'loaded state dict has a different number
    of parameter groups', naming no file and no fix."""
    work = str(tmp_path / 'run')
    shutil.copytree(head_10x_one_epoch, work)
    rc, out = train(
        AN, work, tiny_demo, 2, '--resume',
        more=HEAD_10X +
        ('optim_wrapper.constructor=DefaultOptimWrapperConstructor', ))
    assert rc != 0
    ckpt = osp.join(work, 'epoch_1.pth')
    assert (f'cannot resume the optimizer state of {ckpt}: it has 2 '
            'parameter groups, built by GroupedOptimWrapperConstructor, and '
            'the optimizer of this config has ') in out
    assert ('built by DefaultOptimWrapperConstructor '
            "(optim_wrapper.constructor). Resume with the checkpoint's "
            'constructor (--cfg-options optim_wrapper.constructor='
            'GroupedOptimWrapperConstructor), or pass --resume-weights-only '
            f'{ckpt} to continue from its weights with a fresh optimizer.'
            ) in out
    assert 'different number of parameter groups' not in out


@pytest.mark.slow
def test_resume_of_an_older_checkpoint_of_the_same_classes_does_not_warn(
        tiny_demo, head_10x_one_epoch, tmp_path):
    """Checkpoints written before the datasets' metainfo named its ``split``
    made MMEngine warn that the dataset differs."""
    work = str(tmp_path / 'run')
    shutil.copytree(head_10x_one_epoch, work)
    path = osp.join(work, 'epoch_1.pth')
    ckpt = torch.load(path, weights_only=True)
    assert ckpt['meta']['dataset_meta'].pop('split') == 'train'
    torch.save(ckpt, path)
    rc, out = train(AN, work, tiny_demo, 2, '--resume', more=HEAD_10X)
    assert rc == 0, out[-3000:]
    assert 'resumed epoch: 1' in out
    assert 'dataset metainfo from the resumed checkpoint is different' \
        not in out


@pytest.mark.slow
def test_a_lock_file_of_json_that_is_not_an_object_is_refused(
        tiny_demo, tmp_path):
    """It was read as the lock of a run "on host ?"."""
    work = tmp_path / 'run'
    work.mkdir()
    lock = work / 'spml_run.lock'
    lock.write_text('[1, 2]')
    rc, out = train(AN, str(work), tiny_demo, 1)
    assert rc != 0
    assert (f'WorkDirInUseError: {work} holds the lock file {lock}, which '
            'cannot be read (ValueError: [1, 2] is not the record of a run, '
            'a JSON object with its pid and host)') in out
    assert 'host ?' not in out
    assert lock.read_text() == '[1, 2]'
