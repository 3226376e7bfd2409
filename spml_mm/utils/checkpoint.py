import glob
import os.path as osp
import pickle
import re
from typing import Optional

import torch
from mmengine.runner.checkpoint import CheckpointLoader

from .pretrained import MAKERS, PretrainedWeightsError, missing_file_message


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holds a pickled object outside the safe allowlist."""


class DamagedCheckpointError(RuntimeError):
    """A checkpoint file is truncated, empty or otherwise unreadable."""


def newest_intact_checkpoint(folder: str,
                             exclude: Optional[str] = None) -> Optional[str]:
    """The most recently written ``*.pth`` file in ``folder`` that loads.

    Each candidate is opened memory-mapped (its zip directory and pickled
    structure are read, not its tensors), newest first.

    Args:
        folder (str): Where to look.
        exclude (str, optional): A path to skip (the damaged file).

    Returns:
        str | None: The path, or None when no checkpoint there loads.
    """
    exclude = osp.realpath(exclude) if exclude else None
    paths = [
        p for p in glob.glob(osp.join(glob.escape(folder), '*.pth'))
        if osp.realpath(p) != exclude
    ]
    for path in sorted(paths, key=osp.getmtime, reverse=True):
        try:
            torch.load(path, map_location='cpu', weights_only=True,
                       mmap=True)
        except Exception:
            continue
        return path
    return None


def _damaged(filename: str, err: BaseException) -> DamagedCheckpointError:
    """The error for a checkpoint that cannot be read, naming the newest
    intact checkpoint beside it and how to use it."""
    reason = str(err).split('. ')[0] or type(err).__name__
    size = osp.getsize(filename)
    message = (f'checkpoint {filename} is damaged ({size} bytes, '
               f'{"empty" if size == 0 else "truncated or corrupt"}: '
               f'{reason}); it cannot be loaded. ')
    intact = newest_intact_checkpoint(osp.dirname(filename) or '.', filename)
    if intact is None:
        return DamagedCheckpointError(
            message + 'No intact checkpoint is beside it; start the run '
            'again without --resume.')
    return DamagedCheckpointError(
        message + f'The newest intact checkpoint beside it is {intact}: '
        f'resume from it with `python tools/train.py CONFIG --resume '
        f'{intact}`, or test it with `python tools/test.py CONFIG '
        f'{intact}`.')


def load_checkpoint_safely(filename: str,
                           map_location=None,
                           mmap: bool = False) -> dict:
    """``torch.load`` with ``weights_only=True`` and a clear refusal.

    Only tensors, builtin containers and the types PyTorch allowlists (plus
    those added with ``torch.serialization.add_safe_globals``) are
    unpickled; checkpoints written with :class:`SafeCheckpointHook` need
    nothing more. Any other pickled object is refused, because unpickling it
    could run arbitrary code.

    A truncated, empty or corrupt file raises
    :class:`DamagedCheckpointError` naming it and the newest intact
    checkpoint in its folder, with the commands that use that one.

    Args:
        filename (str): Local checkpoint path.
        map_location: As in :func:`torch.load`.
        mmap (bool): Map the tensors from the file rather than read them, to
            read the rest of a large checkpoint. Defaults to False.

    Returns:
        dict: The checkpoint.
    """
    filename = osp.expanduser(filename)
    if not osp.isfile(filename):
        if osp.basename(filename) in MAKERS:  # pretrained weights we make
            raise PretrainedWeightsError(missing_file_message(filename))
        raise FileNotFoundError(f'checkpoint {filename} does not exist')
    try:
        return torch.load(
            filename, map_location=map_location, weights_only=True,
            mmap=mmap)
    except pickle.UnpicklingError as err:
        found = re.search(r'GLOBAL (\S+)', str(err))
        if found is None:
            raise _damaged(filename, err) from None
        raise UnsafeCheckpointError(
            f'refusing to load {filename}: it contains the pickled object '
            f'{found.group(1)}, which is not on the safe list (tensors, '
            'builtin types, types registered with '
            'torch.serialization.add_safe_globals). '
            'Unpickling it could run arbitrary code. Checkpoints saved with '
            "spml_mm's SafeCheckpointHook load safely; if you trust this "
            'file, load it once with torch.load(..., weights_only=False) and '
            're-save its state_dict.') from None
    except (EOFError, RuntimeError) as err:
        # torch's zip reader reports a truncated file as a RuntimeError
        if isinstance(err, RuntimeError) and 'zip archive' not in str(err):
            raise
        raise _damaged(filename, err) from None


# MMEngine's extension point for loading local files (an empty prefix).
CheckpointLoader.register_scheme(
    prefixes='', loader=load_checkpoint_safely, force=True)


def find_last_checkpoint(work_dir: str) -> Optional[str]:
    """The checkpoint named by ``<work_dir>/last_checkpoint``, as a path.

    ``SPMLCheckpointHook`` writes the name relative to the work dir, so a
    copied or moved work dir still resumes from its own checkpoint; an
    absolute path (written by MMEngine's ``CheckpointHook``) is read as is.

    Args:
        work_dir (str): The run's work dir.

    Returns:
        str | None: The checkpoint path, or None when the work dir has no
        ``last_checkpoint`` file.

    Raises:
        FileNotFoundError: ``last_checkpoint`` is empty or names a file that
            does not exist.
    """
    record = osp.join(work_dir, 'last_checkpoint')
    if not osp.isfile(record):
        return None
    with open(record) as f:
        name = f.read().strip()
    if not name:
        raise FileNotFoundError(
            f'{record} is empty: it names no checkpoint (a write of it was '
            'cut short outside the plugin). Pass the checkpoint to resume '
            'from with --resume PATH (e.g. the newest epoch_*.pth in '
            f'{work_dir}), or delete {record}.')
    if '://' in name or osp.isabs(name):
        path = name
    else:
        path = osp.normpath(osp.join(work_dir, name))
    if '://' not in path and not osp.isfile(path):
        raise FileNotFoundError(
            f'{record} names {name!r}, but {path} does not exist; pass the '
            'checkpoint to resume from with --resume PATH.')
    return path


def find_best_checkpoint(work_dir: str) -> str:
    """The best checkpoint of a run, as its checkpoint hook recorded it.

    MMEngine's ``CheckpointHook(save_best=...)`` keeps the best checkpoint's
    path in the message hub (``best_ckpt``), which the last checkpoint
    carries. The work dir may hold other ``best_*.pth`` files (another
    run's, or one that a kill left before its removal): their names or
    listing order do not tell which is best. A run moved with its files is
    found in its new place.

    Args:
        work_dir (str): The run's work dir (its ``last_checkpoint``).

    Returns:
        str: The path of the best checkpoint.

    Raises:
        FileNotFoundError: The run has no last checkpoint, records no best
            checkpoint (or one per metric of several), or the recorded file
            is gone.
    """
    last = find_last_checkpoint(work_dir)
    if last is None:
        raise FileNotFoundError(
            f'{work_dir} has no last_checkpoint: no run of tools/train.py '
            'saved a checkpoint there.')
    info = (load_checkpoint_safely(last, map_location='cpu', mmap=True).get(
        'message_hub') or {}).get('runtime_info') or {}
    recorded = [
        path for key, path in info.items()
        if (key == 'best_ckpt' or key.startswith('best_ckpt_')) and path
    ]
    if len(recorded) != 1:
        raise FileNotFoundError(
            f'{last} records {len(recorded)} best checkpoints'
            f'{": " + ", ".join(recorded) if recorded else ""} (one is '
            'recorded when default_hooks.checkpoint.save_best names one '
            'metric, after the first validation).')
    path = recorded[0]
    if osp.isfile(path):
        return path
    moved = osp.join(osp.dirname(last), osp.basename(path))
    if osp.isfile(moved):
        return moved
    raise FileNotFoundError(
        f'{last} records the best checkpoint {path}, which does not exist.')
