"""One run per work dir: a lock, and no new run over an old one's files."""
import contextlib
import glob
import json
import os
import os.path as osp
import socket
import sys
import time
from typing import Iterator, Optional

from mmengine.config import Config

#: The lock file a training run holds in its work dir.
LOCK_NAME = 'spml_run.lock'


class WorkDirInUseError(RuntimeError):
    """The work dir belongs to another run."""


def _global_rank() -> int:
    # read before torch.distributed starts: torchrun, Slurm, Open MPI
    for name in ('RANK', 'SLURM_PROCID', 'OMPI_COMM_WORLD_RANK'):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def _start_time(pid: int) -> Optional[str]:
    """The process's start time in clock ticks since boot (Linux), which
    tells a live process from a later one that reuses its pid."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(owner: dict) -> bool:
    pid = owner.get('pid')
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    started = owner.get('start_time')
    return started is None or _start_time(pid) in (None, started)


def _take_lock(path: str) -> dict:
    """Create the lock file, recovering a stale one of a dead process."""
    owner = dict(
        pid=os.getpid(),
        host=socket.gethostname(),
        start_time=_start_time(os.getpid()),
        started=time.strftime('%Y-%m-%d %H:%M:%S'),
        command=' '.join(sys.argv))
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                with open(path) as f:
                    held = json.load(f)
                if not (isinstance(held, dict)
                        and {'pid', 'host'} <= set(held)):
                    raise ValueError(
                        f'{json.dumps(held)[:40]} is not the record of a run'
                        ', a JSON object with its pid and host')
            except (OSError, ValueError) as err:
                raise WorkDirInUseError(
                    f'{osp.dirname(path)} holds the lock file {path}, which '
                    f'cannot be read ({type(err).__name__}: {err}), so '
                    'which run holds the work dir is unknown: another run '
                    'may be starting there, or the file is damaged. Pass '
                    'another --work-dir, or, if no run uses this one, delete '
                    f'{path}.') from None
            if held['host'] != owner['host']:
                raise WorkDirInUseError(
                    f'{osp.dirname(path)} is in use by a run on host '
                    f'{held["host"]} (pid {held["pid"]}, '
                    f'started {held.get("started", "?")}: '
                    f'{held.get("command", "?")}); pass another --work-dir. '
                    'If that run is no longer running, delete '
                    f'{path}.') from None
            if _alive(held):
                raise WorkDirInUseError(
                    f'{osp.dirname(path)} is in use by the running process '
                    f'{held["pid"]} (started {held.get("started", "?")}: '
                    f'{held.get("command", "?")}); wait for it to end or '
                    'pass another --work-dir.') from None
            # printed: the run's logger does not exist yet
            print(f'Recovering the stale lock {path} of process '
                  f'{held["pid"]} (started '
                  f'{held.get("started", "?")}), which is no longer '
                  'running.', flush=True)
            os.remove(path)
            continue
        with os.fdopen(fd, 'w') as f:
            json.dump(owner, f)
        return owner
    raise WorkDirInUseError(f'could not take the lock {path}')


def _refuse_used(work_dir: str) -> None:
    """A run without ``--resume`` must not mix its checkpoints with those
    of an earlier run."""
    found = sorted(
        osp.basename(p)
        for p in glob.glob(osp.join(glob.escape(work_dir), '*.pth')))
    if osp.isfile(osp.join(work_dir, 'last_checkpoint')):
        found.insert(0, 'last_checkpoint')
    if found:
        raise WorkDirInUseError(
            f'{work_dir} holds the checkpoints of an earlier run '
            f'({", ".join(found[:4])}{", ..." if len(found) > 4 else ""}); '
            'a new run there would mix its best checkpoints with them. '
            'Continue that run with --resume, or start this one in another '
            '--work-dir (or move the old files away yourself).')


@contextlib.contextmanager
def claim_work_dir(cfg: Config) -> Iterator[None]:
    """Hold ``cfg.work_dir`` for one training run.

    On the process of global rank 0: takes ``<work_dir>/spml_run.lock``
    (pid, host, start time and command), refusing a work dir whose lock is
    held by a live process and recovering, with a message, the lock of a
    process that is no longer running; then refuses a run without
    ``--resume`` (``cfg.resume``) in a work dir that holds checkpoints or a
    ``last_checkpoint`` of an earlier run. The lock is removed when the
    block ends; a killed run leaves it, and the next run recovers it.

    Args:
        cfg (Config): The merged config (``work_dir``, ``resume``).

    Raises:
        WorkDirInUseError: The work dir belongs to another run.
    """
    if _global_rank() != 0:
        yield
        return
    work_dir = osp.abspath(cfg.work_dir)
    os.makedirs(work_dir, exist_ok=True)
    path = osp.join(work_dir, LOCK_NAME)
    owner = _take_lock(path)
    try:
        if not cfg.get('resume'):
            _refuse_used(work_dir)
        yield
    finally:
        try:
            with open(path) as f:
                ours = json.load(f) == owner
        except (OSError, ValueError):
            ours = False
        if ours:
            os.remove(path)


def check_train_schedule(cfg: Config) -> None:
    """Refuse a training schedule that cannot train, before anything runs.

    ``train_cfg.max_epochs`` / ``max_iters`` and ``val_interval`` must be
    integers >= 1 (MMEngine runs 0 epochs without a word and writes no
    checkpoint).

    Args:
        cfg (Config): The merged config.

    Raises:
        ValueError: A value is not an integer >= 1.
    """
    train_cfg = cfg.get('train_cfg') or {}
    for key in ('max_epochs', 'max_iters', 'val_interval'):
        value = train_cfg.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f'train_cfg.{key}={value!r}: it must be an integer >= 1 '
                f'(a run with {key}={value!r} would train nothing and write '
                'no checkpoint).')
