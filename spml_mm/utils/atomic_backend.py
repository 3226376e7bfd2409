import hashlib
import os
import os.path as osp
import re
from pathlib import Path
from typing import Union

from mmengine.fileio import LocalBackend, register_backend

#: Ends the temporary file a write goes to before it is renamed.
PARTIAL_SUFFIX = '.spml.partial'
_PARTIAL_NAME = re.compile(r'(.+)\.([0-9a-f]{8})' + re.escape(PARTIAL_SUFFIX))


def _partial_tag(name: str) -> str:
    return hashlib.sha256(f'spml_mm partial {name}'.encode()).hexdigest()[:8]


def partial_path(filepath: str) -> str:
    """The temporary file of a write to ``filepath``:
    ``<filepath>.<tag>.spml.partial``, where the tag, a hash of the file's
    name, marks it as the plugin's own (:func:`is_partial_file`)."""
    return (f'{filepath}.{_partial_tag(osp.basename(filepath))}'
            f'{PARTIAL_SUFFIX}')


def is_partial_file(path: str) -> bool:
    """Whether ``path`` is a temporary file written by
    :func:`write_atomically` (a user's file that merely ends in
    ``.spml.partial`` is not)."""
    found = _PARTIAL_NAME.fullmatch(osp.basename(path))
    return bool(found) and _partial_tag(found.group(1)) == found.group(2)


def fsync_dir(dirname: str) -> None:
    """Make a rename or unlink inside ``dirname`` durable (no-op on Windows).
    """
    if os.name != 'posix':
        return
    fd = os.open(dirname, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(data: Union[bytes, str], filepath: str) -> None:
    """Write ``data`` to ``filepath`` so that a reader sees old or new, whole.

    The bytes go to :func:`partial_path` in the same folder, which is
    flushed and fsynced, then renamed over ``filepath`` (an atomic
    replacement on POSIX and Windows) and the folder is fsynced. A kill or an
    I/O error (``ENOSPC``, ``EIO``) at any point leaves the previous
    ``filepath`` untouched; an error also removes the partial file.

    Args:
        data (bytes | str): What to write (str is written as UTF-8).
        filepath (str): Destination path; its folder is created if needed.
    """
    if isinstance(data, str):
        data = data.encode('utf-8')
    dirname = osp.dirname(osp.abspath(filepath))
    os.makedirs(dirname, exist_ok=True)
    partial = partial_path(filepath)
    try:
        with open(partial, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, filepath)
    except BaseException:
        if osp.lexists(partial):
            os.remove(partial)
        raise
    fsync_dir(dirname)


@register_backend('spml_atomic_local')
class AtomicLocalBackend(LocalBackend):
    """MMEngine's local file backend whose writes are atomic and durable.

    ``put`` and ``put_text`` go through :func:`write_atomically`, so a
    checkpoint file is either the previous one or the complete new one, never
    a truncated mix, whatever happens while it is written. Everything else is
    :class:`mmengine.fileio.LocalBackend`. ``SPMLCheckpointHook`` uses it for
    local work dirs; any MMEngine component takes it with
    ``backend_args=dict(backend='spml_atomic_local')``.
    """

    def put(self, obj: bytes, filepath: Union[str, Path]) -> None:
        write_atomically(obj, str(filepath))

    def put_text(self,
                 obj: str,
                 filepath: Union[str, Path],
                 encoding: str = 'utf-8') -> None:
        write_atomically(obj.encode(encoding), str(filepath))
