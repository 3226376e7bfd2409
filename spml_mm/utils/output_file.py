"""The rule every tool that writes a file follows for its ``--out``.

A tool never replaces what it did not write, nor one of its own inputs:

- an ``--out`` that is one of the run's inputs (the checkpoint, the config,
  the thresholds file, an images list, a score file read) is refused;
- an existing file is replaced only when the tool wrote it itself (it
  recognises its own format) or ``--overwrite`` is given, and the tool says
  which;
- the file's ending must be one of the format's;
- the file is written atomically (:func:`write_atomically`,
  :func:`atomic_output`): a reader sees the old file or the new one, and a
  write killed halfway leaves the old file and a partial file that the
  next run of the tool removes.

:func:`check_output_file` applies the rule before any work is done.
"""
import contextlib
import json
import os
import os.path as osp
from typing import Callable, Iterator, Optional, Sequence

from .atomic_backend import fsync_dir, partial_path


class OutputFileError(ValueError):
    """An ``--out`` that the tool must not write."""


def _same_file(a: str, b: str) -> bool:
    if osp.exists(a) and osp.exists(b):
        return osp.samefile(a, b)
    return osp.realpath(a) == osp.realpath(b)


def check_output_file(path: str,
                      suffixes: Sequence[str],
                      inputs: Sequence[Optional[str]] = (),
                      written_by_tool: Optional[Callable[[str],
                                                         bool]] = None,
                      overwrite: bool = False,
                      option: str = '--out') -> str:
    """Refuse an output file that would replace an input or a file the
    tool did not write; clean up a partial file of an earlier killed write.

    Args:
        path (str): The file the tool is about to write.
        suffixes (Sequence[str]): The endings of its format (``'.json'``).
        inputs (Sequence[str]): The run's input files (None entries are
            skipped); ``path`` must be none of them.
        written_by_tool (Callable[[str], bool], optional): Whether an
            existing file is one the tool wrote (its format); such a file
            is replaced without ``overwrite``.
        overwrite (bool): The user allows replacing any existing file
            (``--overwrite``); inputs stay refused.
        option (str): The option's name, for the messages.

    Returns:
        str: What happens to an existing file (a line for the tool's log),
        or ``''`` when ``path`` is new.

    Raises:
        OutputFileError: The ending is not the format's, ``path`` is an
            input, a folder, or an existing file the tool did not write
            (without ``overwrite``).
    """
    for given in inputs:
        if given and _same_file(path, given):
            raise OutputFileError(
                f'{option} {path} is one of this run\'s inputs ({given}); '
                'it is kept: write to another file')
    if not path.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise OutputFileError(
            f'{option} {path}: the file must end with '
            f'{" or ".join(suffixes)} (the format it is written in)')
    if osp.isdir(path):
        raise OutputFileError(f'{option} {path} is a folder; name a file')
    partial = partial_path(path)
    if osp.lexists(partial):
        os.remove(partial)  # ours: its tag says so (is_partial_file)
    if not osp.lexists(path):
        return ''
    if written_by_tool is not None:
        try:
            ours = written_by_tool(path)
        except Exception:  # unreadable: not recognisably the tool's
            ours = False
        if ours:
            return f'replacing {path}, which this tool wrote earlier'
    if overwrite:
        return f'replacing {path} (--overwrite)'
    raise OutputFileError(
        f'{option} {path} exists and was not written by this tool; it is '
        'kept: pass --overwrite to replace it, or choose another file')


def json_with_format(prefix: str) -> Callable[[str], bool]:
    """A ``written_by_tool`` check: the file is a JSON object whose
    ``format`` starts with ``prefix``."""

    def check(path: str) -> bool:
        with open(path) as f:
            found = json.load(f)
        return isinstance(found, dict) and str(found.get('format',
                                                         '')).startswith(
                                                             prefix)

    return check


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """A temporary path in ``path``'s folder for a writer that takes a file
    name (an exporter); renamed over ``path`` when the block ends without
    error, removed otherwise.

    Example:
        >>> with atomic_output('model.onnx') as tmp:
        ...     torch.onnx.export(model, args, tmp)
    """
    dirname = osp.dirname(osp.abspath(path))
    os.makedirs(dirname, exist_ok=True)
    partial = partial_path(path)
    try:
        yield partial
        os.replace(partial, path)
    except BaseException:
        if osp.lexists(partial):
            os.remove(partial)
        raise
    fsync_dir(dirname)
