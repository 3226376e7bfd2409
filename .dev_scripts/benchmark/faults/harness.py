"""The fault probe's harness: the bench every scenario runs on (a demo
dataset in a temporary folder, configs with the fault injector), the
judging of an outcome as one of :data:`RESULTS`, the page of the outcomes
and the command that runs the groups of scenarios."""
import argparse
import functools
import os
import os.path as osp
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, Iterator

from spml_mm.datasets import make_demo_dataset
from benchmark.pages.results import render_results_page
from benchmark.common import REPO, machine_summary

CONFIG = 'configs/an/an_vgg11bn_demo.py'
RESULTS = ('right result', 'clear error', 'silent wrong answer', 'crash',
           'data lost')
PROMISED = RESULTS[:2]
#: The first line of a training iteration in the log.
TRAIN_LINE = 'Epoch(train)'


# Imported by the faulty runs (custom_imports): makes the FAULT_AT-th write of
# a checkpoint file fail halfway, by ENOSPC or by SIGKILL of the process, and
# injects an infinite gradient when FAULT=inf_grad.
INJECTOR = r'''
import builtins, errno, os, signal
import torch
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

FAULT, AT = os.environ.get('FAULT', ''), int(os.environ.get('FAULT_AT', 0))
NAMES = ('.pth', '.partial', 'last_checkpoint')
_open, _count = builtins.open, [0]


def _faulty_open(file, mode='r', *args, **kwargs):
    f = _open(file, mode, *args, **kwargs)
    if not (isinstance(file, str) and file.endswith(NAMES) and 'w' in mode):
        return f
    _count[0] += 1
    if _count[0] != AT:
        return f
    write = f.write

    def half(data):
        write(data[:len(data) // 2])
        f.flush()
        if FAULT == 'kill_in_write':
            os.kill(os.getpid(), signal.SIGKILL)
        raise OSError(errno.ENOSPC, 'No space left on device')

    f.write = half
    return f


if FAULT in ('kill_in_write', 'enospc_in_write'):
    builtins.open = _faulty_open


@HOOKS.register_module()
class InfGradHook(Hook):
    """Makes the first weight's gradient infinite at iteration ``at``."""

    def __init__(self, at=2):
        self.at = at

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.iter + 1 != self.at:
            return
        model = getattr(runner.model, 'module', runner.model)
        param = next(model.parameters())
        handle = [None]

        def inf(grad):
            handle[0].remove()
            return grad * float('inf')

        handle[0] = param.register_hook(inf)


@HOOKS.register_module()
class KillInTrainHook(Hook):
    """SIGKILLs the process at the first iteration of epoch ``epoch``."""

    def __init__(self, epoch):
        self.epoch = epoch

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.epoch + 1 == self.epoch:
            os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class KillInValHook(Hook):
    """SIGKILLs the process in the middle of epoch ``epoch``'s validation."""

    def __init__(self, epoch):
        self.epoch = epoch

    def after_val_iter(self, runner, batch_idx, data_batch=None,
                       outputs=None):
        if runner.epoch == self.epoch:
            os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class SleepOnRankHook(Hook):
    def __init__(self, rank, seconds):
        self.rank, self.seconds = rank, seconds

    def before_train_epoch(self, runner):
        from mmengine.dist import get_rank
        import time
        if get_rank() == self.rank:
            time.sleep(self.seconds)
'''


FAULT_CONFIG = '''
_base_ = '{repo}/{config}'
custom_imports = dict(imports=['spml_mm', 'fault_injector'],
                      allow_failed_imports=False)
custom_hooks = _base_.custom_hooks + {extra}
{more}
'''


class Bench:
    """Runs the scenarios in one temporary folder."""

    def __init__(self, tmp: str):
        self.tmp = tmp
        self.data = osp.join(tmp, 'demo')
        make_demo_dataset(self.data, num_train=160, num_test=80, seed=0)
        with open(osp.join(tmp, 'fault_injector.py'), 'w') as f:
            f.write(INJECTOR)
        self.count = 0

    def config(self, extra='[]', more='', base=CONFIG):
        self.count += 1
        path = osp.join(self.tmp, f'config{self.count}.py')
        with open(path, 'w') as f:
            f.write(FAULT_CONFIG.format(repo=REPO, config=base, extra=extra,
                                        more=more))
        return path

    def options(self, data=None, epochs=2):
        data = data or self.data
        return [
            '--cfg-options', f'train_cfg.max_epochs={epochs}',
            f'train_dataloader.dataset.data_root={data}',
            f'val_dataloader.dataset.data_root={data}',
            f'test_dataloader.dataset.data_root={data}'
        ]

    def run(self, args, env=None, timeout=600):
        """Run a tool: (status, log); its wall time (the interpreter's start
        and imports included) in ``self.seconds``."""
        env = dict(os.environ, PYTHONPATH=f'{self.tmp}:{REPO}', **(env or {}))
        start = time.time()
        proc = subprocess.run(
            [sys.executable] + args,
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout)
        self.seconds = time.time() - start
        return proc.returncode, proc.stdout + proc.stderr

    def train(self, work, *extra, config=None, env=None, epochs=2):
        config = config or self.config()
        return self.run(['tools/train.py', config, '--work-dir', work] +
                        list(extra) + self.options(epochs=epochs), env=env)


def judged(ok: bool, good: str, bad: str) -> str:
    """``good`` (one of :data:`RESULTS`) when the check passed, else ``bad``.
    """
    return good if ok else bad


def recovered(case: str, rc: int, log: str, marker: str,
              outcome: str) -> tuple:
    """The row of a case the run must recover from: it trains to the end
    and logs ``marker``."""
    ok = rc == 0 and marker in log
    return case, outcome if ok else 'FAILED', judged(ok, 'right result',
                                                     'crash')


def refusal(rc: int, line: str) -> str:
    """A run that had to stop: a clear error when it stopped with the
    expected message, a silent wrong answer when it exited 0, else a crash.
    """
    if rc == 0:
        return 'silent wrong answer'
    return 'clear error' if line else 'crash'


def error_line(log: str, name: str) -> str:
    """The last line of ``log`` that contains ``name`` (the error raised,
    not a line of the traceback)."""
    for line in reversed(log.splitlines()):
        if name in line:
            return line.strip()
    return ''


def best_files(work):
    return sorted(f for f in os.listdir(work) if f.startswith('best_'))


def stopped_with(bench, name, args, expect, config=None, epochs=1):
    """Train in a new work dir; the line with ``expect``, the result
    (:func:`refusal`) and the checkpoints saved."""
    rc, log = bench.train(osp.join(bench.tmp, name), *args, config=config,
                          epochs=epochs)
    line = error_line(log, expect)
    saved = [f for f in os.listdir(osp.join(bench.tmp, name))
             if f.endswith('.pth')] if osp.isdir(osp.join(bench.tmp,
                                                          name)) else []
    return line, refusal(rc, line), saved


def trained_run(bench):
    """A 1-epoch AN run, trained once and copied by the misuse cases."""
    work = osp.join(bench.tmp, 'an_1epoch')
    if not osp.isfile(osp.join(work, 'epoch_1.pth')):
        bench.train(work, epochs=1)
    return work


def copied_run(bench, name):
    copy = osp.join(bench.tmp, name)
    shutil.copytree(trained_run(bench), copy)
    return copy


def snapshot(folder):
    """Every file's name and bytes below ``folder``."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = osp.join(root, name)
            with open(path, 'rb') as f:
                found[osp.relpath(path, folder)] = f.read()
    return found


def work_with(bench, folder: str, name: str, text: str) -> str:
    """A new work dir ``folder`` of the bench holding the file ``name``
    with ``text``."""
    work = osp.join(bench.tmp, folder)
    os.makedirs(work)
    with open(osp.join(work, name), 'w') as f:
        f.write(text)
    return work


def users_file(bench, folder: str, name: str, text: str, case: str):
    """A run in a work dir holding a file of the user: the file must be
    kept, and the run train on."""
    mine = osp.join(work_with(bench, folder, name, text), name)
    rc, _ = bench.train(osp.dirname(mine), epochs=1)
    kept = osp.isfile(mine) and open(mine).read() == text
    return (case, f'{"kept" if kept else "DELETED"}; trained '
            f'{"on" if rc == 0 else "FAILED"}',
            'data lost' if not kept else judged(rc == 0, 'right result',
                                                'crash'))


def data_copy(bench, name, damage=None):
    """A copy of the demo data (images linked) with ``damage`` applied."""
    root = osp.join(bench.tmp, name)
    os.makedirs(osp.dirname(root), exist_ok=True)
    shutil.copytree(bench.data, root, ignore=shutil.ignore_patterns('images'))
    os.symlink(osp.join(bench.data, 'images'), osp.join(root, 'images'))
    if damage is not None:
        damage(root)
    return root


def bad_file(bench, name, damage, expect):
    """Train on a copy of the data that ``damage`` changed: the error line
    with ``expect`` and the result (:func:`refusal`)."""
    root = data_copy(bench, f'data_{name}', damage)
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         osp.join(bench.tmp, f'work_{name}')] +
                        bench.options(data=root, epochs=1))
    line = error_line(log, expect)
    return line.replace(root + '/', ''), refusal(rc, line)


ROW = re.compile(r'^\| (.+?) \| (.+) \| ([a-z ]+) \| (?:yes|NO) \|$')


def page_rows(path):
    """The (fault, outcome, result) rows of an existing page."""
    if not osp.isfile(path):
        return []
    with open(path) as f:
        return [m.groups() for m in map(ROW.match, f.read().splitlines())
                if m and m.group(3) in RESULTS]


def summary(rows):
    """The counts the page leads with."""
    counts = {r: sum(row[2] == r for row in rows) for r in RESULTS}
    return (f'{len(rows)} cases tried: {counts["right result"]} right '
            f'results, {counts["clear error"]} clear errors, '
            f'{counts["silent wrong answer"]} silent wrong answers, '
            f'{counts["crash"]} crashes, {counts["data lost"]} with data '
            'lost.')


def write_page(path, rows, groups, every_group):
    """The page of the outcomes ``rows``; ``groups``: those run now, of
    ``every_group``."""
    rerun = ('' if set(groups) == set(every_group) else
             f' This page\'s last run re-ran the groups {", ".join(groups)} '
             '(`--only`); the other rows are from earlier runs.')
    with open(path, 'w') as f:
        f.write('`PYTHONPATH=.dev_scripts python -m benchmark.faults --out '
                'docs/results/faults.md`: each fault injected into a run of '
                '`configs/an/an_vgg11bn_demo.py` (the EM and ROLE demo '
                'configs where named) on a 160-image demo dataset (2 '
                f'epochs), on {machine_summary()}.{rerun}\n\n'
                f'**{summary(rows)}**\n\n'
                '| fault | outcome | result | as promised |\n'
                '| --- | --- | --- | --- |\n')
        for fault, outcome, result in rows:
            f.write(f'| {fault} | {outcome} | {result} | '
                    f'{"yes" if result in PROMISED else "NO"} |\n')


#: A group of scenarios: yields them, each returning (fault, outcome, one
#: of :data:`RESULTS`).
Group = Callable[[Bench], Iterator[Callable[[], tuple]]]


def each(bench: Bench, *cases) -> Iterator[Callable[[], tuple]]:
    """The scenario of each case function, on ``bench``."""
    for case in cases:
        yield functools.partial(case, bench)


def scenarios(bench: Bench, groups: Dict[str, Group], only) -> Iterator:
    """The scenarios of the groups named in ``only``, in ``groups``'
    order."""
    for name, group in groups.items():
        if name in only:
            yield from group(bench)


def run_scenarios(groups: Dict[str, Group], only) -> list:
    """Run the scenarios on a new bench and print a line per outcome; the
    (fault, outcome, result) rows."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(tmp)
        for k, scenario in enumerate(scenarios(bench, groups, only)):
            try:
                fault, outcome, result = scenario()
            except Exception as err:  # a broken scenario is reported too
                fault, outcome, result = (f'scenario {k}',
                                          f'{type(err).__name__}: {err}',
                                          'crash')
            outcome = outcome.replace(tmp + '/', '').replace('|', '/')
            rows.append((fault, outcome, result))
            print(f'{"ok  " if result in PROMISED else "FAIL"} {fault}: '
                  f'{outcome} ({result})', flush=True)
    return rows


def main(groups: Dict[str, Group], description: str) -> int:
    """The command: the groups of ``--only`` (default all of ``groups``),
    their page with ``--out``; 1 where an outcome is not as promised."""
    parser = argparse.ArgumentParser(
        prog='PYTHONPATH=.dev_scripts python -m benchmark.faults',
        description=description)
    parser.add_argument(
        '--out',
        help='write the markdown table here; docs/results/faults.md also '
        'regenerates docs/RESULTS.md')
    parser.add_argument(
        '--only', nargs='+', choices=list(groups), default=list(groups),
        help='run these groups of scenarios only')
    args = parser.parse_args()
    rows = run_scenarios(groups, args.only)
    print(summary(rows))
    if args.out:
        ran = {row[0] for row in rows}
        kept = [row for row in page_rows(args.out) if row[0] not in ran]
        if set(args.only) == set(groups):
            kept = []
        write_page(args.out, kept + rows, args.only, list(groups))
        docs = osp.join(REPO, 'docs')
        if osp.abspath(args.out) == osp.join(docs, 'results', 'faults.md'):
            print('wrote', render_results_page(docs))
    return 1 if any(row[2] not in PROMISED for row in rows) else 0
