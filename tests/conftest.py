import multiprocessing.util
import os
import os.path as osp
import subprocess
import sys

import pytest

from spml_mm.datasets import make_demo_dataset

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
#: The development folder: its modules (``benchmark.*``, ``analysis.*``,
#: ``docs_tables``) import with it on the path (pytest's ``pythonpath``; a
#: process gets it through :func:`dev_env`).
DEV_SCRIPTS = osp.join(REPO, '.dev_scripts')


def dev_env(env=None, **extra):
    """``env`` (default ``os.environ``) and ``extra`` with the repository
    and :data:`DEV_SCRIPTS` first on ``PYTHONPATH``: what a process running
    ``python -m benchmark.<name>`` needs, from any folder."""
    env = dict(os.environ if env is None else env, **extra)
    env['PYTHONPATH'] = os.pathsep.join(
        [REPO, DEV_SCRIPTS] + [p for p in [env.get('PYTHONPATH')] if p])
    return env

#: Programs that cost seconds each (an interpreter importing torch and the
#: plugin, a launcher, a script that runs them): only slow tests start them.
COSTLY_PROGRAMS = ('bash', 'sh', 'torchrun', 'srun')


def costly_program(args):
    """Whether ``args`` (Popen's first argument) starts a costly program."""
    program = args if isinstance(args, (str, bytes)) else args[0]
    if isinstance(program, bytes):
        program = program.decode()
    name = osp.basename(str(program).split()[0])
    return name.startswith('python') or name in COSTLY_PROGRAMS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test of the fast tier (not marked slow) that starts a Python
    process or a script (through ``subprocess`` or ``multiprocessing``'s
    spawn) fails: it would make ``make test`` slow unseen."""
    if item.get_closest_marker('slow') is not None:
        yield
        return
    popen_init = subprocess.Popen.__init__
    spawnv_passfds = multiprocessing.util.spawnv_passfds

    def check(command):
        if costly_program(command):
            raise RuntimeError(
                f'{item.nodeid} starts {command!r}: mark the test '
                '@pytest.mark.slow (make test runs -m "not slow")')

    def popen(self, *args, **kwargs):
        check(args[0] if args else kwargs['args'])
        popen_init(self, *args, **kwargs)

    def spawn(path, args, passfds):
        check(args)
        return spawnv_passfds(path, args, passfds)

    subprocess.Popen.__init__ = popen
    multiprocessing.util.spawnv_passfds = spawn
    try:
        yield
    finally:
        subprocess.Popen.__init__ = popen_init
        multiprocessing.util.spawnv_passfds = spawnv_passfds


@pytest.fixture(scope='session')
def tiny_demo(tmp_path_factory):
    """A small demo dataset: 160 official-train and 80 test images."""
    root = str(tmp_path_factory.mktemp('demo'))
    make_demo_dataset(root, num_train=160, num_test=80, seed=0)
    return root


def run_tool(args, timeout=600, env=None):
    """Run a repository command (with .dev_scripts on the path where ``env``
    is not given); fail with its output if it fails."""
    proc = subprocess.run(
        args,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dev_env() if env is None else env)
    if proc.returncode != 0:
        pytest.fail(f'{" ".join(args)} failed ({proc.returncode}):\n'
                    f'{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}')
    return proc.stdout + proc.stderr


PYTHON = sys.executable
