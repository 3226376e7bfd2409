"""A training run holds its work dir: a lock (stale ones recovered), no new
run over an earlier run's checkpoints, no schedule that trains nothing."""
import json
import os
import socket
import subprocess

import pytest
from mmengine.config import Config

from spml_mm.utils import (WorkDirInUseError, check_train_schedule,
                           claim_work_dir)
from spml_mm.utils.work_dir import LOCK_NAME


def cfg(work_dir, resume=False):
    return Config(dict(work_dir=str(work_dir), resume=resume))


def test_the_lock_is_held_during_the_run_and_released(tmp_path):
    lock = tmp_path / LOCK_NAME
    with claim_work_dir(cfg(tmp_path)):
        held = json.loads(lock.read_text())
        assert held['pid'] == os.getpid()
        assert held['host'] == socket.gethostname()
        with pytest.raises(WorkDirInUseError) as err:
            with claim_work_dir(cfg(tmp_path, resume=True)):
                pass
        assert f'{tmp_path} is in use by the running process ' \
            f'{os.getpid()}' in str(err.value)
        assert lock.exists()  # the refused run leaves the lock alone
    assert not lock.exists()


def test_a_stale_lock_of_a_dead_process_is_recovered(tmp_path, capsys):
    proc = subprocess.Popen(['true'])  # a process that has ended
    proc.wait()
    dead = proc.pid
    (tmp_path / LOCK_NAME).write_text(json.dumps(
        dict(pid=dead, host=socket.gethostname(), started='earlier')))
    with claim_work_dir(cfg(tmp_path)):
        assert json.loads(
            (tmp_path / LOCK_NAME).read_text())['pid'] == os.getpid()
    assert f'Recovering the stale lock {tmp_path / LOCK_NAME} of process ' \
        f'{dead}' in capsys.readouterr().out


def test_a_reused_pid_does_not_hold_the_lock(tmp_path):
    # our own pid, recorded with another start time: an earlier process
    (tmp_path / LOCK_NAME).write_text(json.dumps(
        dict(pid=os.getpid(), host=socket.gethostname(), start_time='1')))
    with claim_work_dir(cfg(tmp_path)):
        pass


def test_a_lock_of_another_host_is_not_guessed_at(tmp_path):
    lock = tmp_path / LOCK_NAME
    lock.write_text(json.dumps(dict(pid=1, host='elsewhere', started='x',
                                    command='tools/train.py a.py')))
    with pytest.raises(WorkDirInUseError,
                       match=r'in use by a run on host elsewhere .* If that '
                       rf'run is no longer running, delete {lock}'):
        with claim_work_dir(cfg(tmp_path)):
            pass


@pytest.mark.parametrize('content', [
    '', '{"pid": 1, "ho', 'unreadable', '[1, 2]', 'null', '{"started": 1}'])
def test_an_unreadable_lock_is_not_called_a_run_on_host_unknown(
        tmp_path, content):
    """A lock file that cannot be read, or valid JSON that is not a run's
    record, was reported as a run "on host ?"."""
    lock = tmp_path / LOCK_NAME
    lock.write_text('{}' if content == 'unreadable' else content)
    if content == 'unreadable':
        lock.chmod(0)
        if os.access(lock, os.R_OK):
            pytest.skip('root reads any file')
    with pytest.raises(WorkDirInUseError) as err:
        with claim_work_dir(cfg(tmp_path)):
            pass
    message = str(err.value)
    assert message.startswith(f'{tmp_path} holds the lock file {lock}, which '
                              'cannot be read (')
    assert message.endswith(
        '), so which run holds the work dir is unknown: another run may be '
        'starting there, or the file is damaged. Pass another --work-dir, '
        f'or, if no run uses this one, delete {lock}.')
    assert 'host ?' not in message
    assert lock.exists()


@pytest.mark.parametrize('left', ['last_checkpoint', 'best_x_epoch_3.pth'])
def test_a_new_run_in_a_used_work_dir_is_refused(tmp_path, left):
    (tmp_path / left).write_text('epoch_3.pth')
    with pytest.raises(WorkDirInUseError,
                       match=rf'holds the checkpoints of an earlier run '
                       rf'\({left}.*Continue that run with --resume'):
        with claim_work_dir(cfg(tmp_path)):
            pass
    assert not (tmp_path / LOCK_NAME).exists()
    with claim_work_dir(cfg(tmp_path, resume=True)):
        pass
    # logs, configs and other files of the user do not make it used
    other = tmp_path / 'other'
    other.mkdir()
    (other / 'notes.txt').write_text('x')
    (other / '20260101_000000').mkdir()
    with claim_work_dir(cfg(other)):
        pass


def test_only_rank_0_takes_the_lock(tmp_path, monkeypatch):
    monkeypatch.setenv('RANK', '1')
    (tmp_path / 'epoch_1.pth').write_text('x')
    with claim_work_dir(cfg(tmp_path)):
        assert not (tmp_path / LOCK_NAME).exists()


@pytest.mark.parametrize('train_cfg', [
    dict(max_epochs=0), dict(max_epochs=-1), dict(max_epochs=2.5),
    dict(by_epoch=False, max_iters=0), dict(max_epochs=2, val_interval=0)
])
def test_a_schedule_that_trains_nothing_is_refused(train_cfg):
    key = next(k for k in ('max_iters', 'val_interval', 'max_epochs')
               if k in train_cfg and train_cfg[k] in (0, -1, 2.5))
    with pytest.raises(ValueError,
                       match=rf'train_cfg.{key}={train_cfg[key]!r}: it must '
                       'be an integer >= 1'):
        check_train_schedule(Config(dict(train_cfg=train_cfg)))
    check_train_schedule(Config(dict(train_cfg=dict(max_epochs=1))))
    check_train_schedule(Config(dict()))
