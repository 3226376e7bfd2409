import collections
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


#: Tests that write the same paths under the repository (the proxy data
#: ``data/proxy-voc-f0.01`` and ``data/proxy-voc-seed1-f0.01``,
#: ``checkpoints/``, made by the benchmark tools they run there): one xdist
#: group, so that two workers never make them at once. A new test that
#: makes data under the repository joins them.
REPO_DATA_TESTS = (
    'tests/tools/test_accuracy_suites.py::'
    'test_an_interrupted_rate_search_run_resumes',
    'tests/tools/test_gpu_run.py::test_gpu_run_rehearsal',
    'tests/tools/test_gpu_run.py::test_the_model_teacher_as_the_queue_runs_it',
)


def xdist_group(nodeid):
    """The xdist group of a test (``make test``/``test-all`` run
    ``-n 2 --dist loadgroup``): its module, so that a module-scoped fixture
    (a training several tests read) is made once, on one worker; the tests
    of :data:`REPO_DATA_TESTS` share one."""
    if nodeid.split('[')[0] in REPO_DATA_TESTS:
        return 'repo_data'
    return nodeid.split('::')[0]


def load_groups(config):
    """Whether the tests run on xdist workers in groups: ``--dist
    loadgroup`` in the controller, which a worker sees as its
    ``loadgroup`` option (its ``dist`` is 'no')."""
    return config.pluginmanager.hasplugin('xdist') and (
        config.getoption('dist', 'no') == 'loadgroup'
        or getattr(config.option, 'loadgroup', False))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` by :func:`xdist_group`, read from the test ids
    (xdist's own loadgroup renames a test after its ``xdist_group`` mark,
    which pytest 9 no longer reads: every test went to any worker), the
    groups handed out in collection order (as
    :func:`pytest_collection_modifyitems` sorts them), not xdist's largest
    count of tests first."""
    if config.getoption('dist', 'no') != 'loadgroup':
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):

        def _split_scope(self, nodeid):
            return xdist_group(nodeid)

    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup``, the order in which the workers take the
    groups: :data:`REPO_DATA_TESTS` first, then by their number of slow
    tests (the long groups start early, the short ones fill the end), else
    as collected."""
    if not load_groups(config):
        return
    groups = [xdist_group(item.nodeid) for item in items]
    slow = collections.Counter(
        group for group, item in zip(groups, items)
        if item.get_closest_marker('slow') is not None)
    order = sorted(range(len(items)), key=lambda i: (
        groups[i] != 'repo_data', -slow[groups[i]], i))
    items[:] = [items[i] for i in order]


def pytest_configure(config):
    """A test worker of ``-n 2`` computes on one thread in the test process
    (two workers share the machine's cores); the tools it starts keep
    torch's default."""
    if os.environ.get('PYTEST_XDIST_WORKER'):
        import torch
        torch.set_num_threads(1)


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
