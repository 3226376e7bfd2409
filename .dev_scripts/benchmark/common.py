"""Helpers every folder of ``.dev_scripts`` shares: the repository's
folders, the results folders, how a page names its command and machine, which
code a result was measured on, and the environment a process running one of
its modules needs.

``.dev_scripts/docs_tables.py``, ``benchmark`` and ``analysis`` all read it,
and it imports no other module of ``.dev_scripts``.
"""
import argparse
import glob
import hashlib
import json
import os
import os.path as osp
import platform
import subprocess
from typing import Optional, Sequence

#: The repository's root.
REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
#: The development folder: ``benchmark``, ``analysis`` and ``docs_tables``
#: import with it on the path (``PYTHONPATH=.dev_scripts python -m ...``).
DEV_SCRIPTS = osp.join(REPO, '.dev_scripts')
#: The tracked result pages: a tool writes there only when its ``--out-dir``
#: names them (and then re-renders docs/RESULTS.md).
RESULTS_DIR = osp.join(REPO, 'docs', 'results')
#: Where the benchmark tools write by default (ignored by git).
WORK_OUT_DIR = osp.join('work_dirs', 'results')


def command_line(argv: Sequence[str]) -> str:
    """``PYTHONPATH=.dev_scripts python -m <folder>.<name> <arguments>``: how
    a tool whose ``sys.argv`` is ``argv`` (its file first) runs from the
    repository root.
    """
    module = osp.splitext(osp.relpath(osp.abspath(argv[0]), DEV_SCRIPTS))[0]
    return ' '.join(['PYTHONPATH=.dev_scripts', 'python', '-m',
                     module.replace(osp.sep, '.'), *argv[1:]])


def dev_env(env: Optional[dict] = None, **extra: str) -> dict:
    """``env`` (default ``os.environ``) and ``extra`` with the repository
    and :data:`DEV_SCRIPTS` first on ``PYTHONPATH``: what a process running
    ``python -m benchmark.<name>`` (or ``analysis.<name>``, ``docs_tables``)
    needs, from any folder."""
    env = dict(os.environ if env is None else env, **extra)
    env['PYTHONPATH'] = os.pathsep.join(
        [REPO, DEV_SCRIPTS] + [p for p in [env.get('PYTHONPATH')] if p])
    return env


def add_out_dir(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--out-dir`` (default :data:`WORK_OUT_DIR`) to a tool that
    writes ``what``."""
    parser.add_argument(
        '--out-dir',
        default=WORK_OUT_DIR,
        help=f'where {what} go (default: {WORK_OUT_DIR}); --out-dir '
        'docs/results updates the tracked result pages and docs/RESULTS.md')


def is_results_dir(out_dir: str) -> bool:
    """Whether ``out_dir`` is the tracked docs/results."""
    return osp.abspath(out_dir) == RESULTS_DIR


def machine_summary() -> str:
    """The processor, its cores, the GPU and the versions, for a page."""
    import torch
    device = (torch.cuda.get_device_name(0)
              if torch.cuda.is_available() else 'no GPU')
    return (f'{platform.processor() or platform.machine()}, '
            f'{os.cpu_count()} CPU cores, {device}; torch {torch.__version__}'
            f', Python {platform.python_version()}')


def commit() -> Optional[str]:
    """The checkout's commit, ``+`` if it has uncommitted changes;
    ``SPML_MM_COMMIT`` where it is set (a copy of the tree without its git
    folder, e.g. on a GPU machine)."""
    if os.environ.get('SPML_MM_COMMIT'):
        return os.environ['SPML_MM_COMMIT']
    try:
        head = subprocess.run(['git', 'rev-parse', '--short=12', 'HEAD'],
                              cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(['git', 'status', '--porcelain', '--',
                                'spml_mm', 'configs'], cwd=REPO,
                               capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ('+' if dirty.strip() else '')


def code_fingerprint() -> str:
    """A hash of the plugin's code and configs (``spml_mm``, ``configs``):
    the same wherever the same tree runs, with or without git."""
    digest = hashlib.sha1()
    for folder in ('spml_mm', 'configs'):
        for path in sorted(glob.glob(osp.join(REPO, folder, '**', '*.py'),
                                     recursive=True)):
            digest.update(osp.relpath(path, REPO).encode())
            with open(path, 'rb') as f:
                digest.update(f.read())
    return digest.hexdigest()[:12]


def write_json(path: str, data) -> None:
    """Write ``data`` to a temporary file renamed over ``path``: a reader,
    or a write interrupted, never sees half a file."""
    with open(path + '.tmp', 'w') as f:
        json.dump(data, f, indent=1)
    os.replace(path + '.tmp', path)


def load_json(path: str) -> dict:
    """The json at ``path``; ``{}`` where there is none."""
    if not osp.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)
