"""Inject faults into demo runs and print one line per fault with the outcome.

    python -m tools.benchmark.faults [--only GROUP ...] \
        [--out docs/results/faults.md]

Kills (SIGKILL) and I/O errors (ENOSPC) halfway through writing each kind of
checkpoint file and before the previous best checkpoint's removal (group
``writes``), resuming into or from other work dirs, early stopping killed
and resumed, another optimizer constructor or an older checkpoint
(``runs``), non-finite losses, gradients and hyperparameters and a hung rank
(``divergence``), bad data (``data``), misuse: checkpoints that do not
fit, shared or reused work dirs, a kill during the last validation, damaged
files, impossible settings (``misuse``), and what the pre-flight answers
before the first training step: the GPU fast recipe, validation on observed
labels with the default and with a wrong selection key, classes or a split
without a positive (``preflight``); duplicated and shared images,
classes without a training positive, pretrained weights offline, resuming
across class counts, damaged run files, paths with spaces, the benchmark
tools' output folder, the GPU command's folders, a CPU run's or a truncated
pack collected, a results json changed under its page, no OpenMMLab stack
for the GPU command (``inputs``); VLPL's and AEVLP's teacher score files:
a regenerated dataset, another file at ``--resume``, a subset, no crops,
no fingerprints, a text file, ``tools/check_dataset.py`` of a missing or
foreign file, the documented CLIP command offline (``teacher``). Each
scenario runs ``tools/train.py`` (``tools/test.py``,
``tools/check_dataset.py``, ``tools/score_teacher.py``) on a
160-image demo dataset in a temporary folder and classifies the outcome as
one of :data:`RESULTS`: the right result, a clear error (it names the
culprit and the fix), a silent wrong answer (exit status 0, wrong or missing
result), a crash (an error that does not say what is wrong) or data lost (a
file the run did not write removed or changed). ``--out`` writes the table
for docs/RESULTS.md; with ``--only`` the rows of the other groups are kept
from the existing page.
"""
import argparse
import json
import os
import os.path as osp
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

from spml_mm.datasets import make_demo_dataset, split_train_val
from spml_mm.utils import find_last_checkpoint, load_checkpoint_safely
from tools.benchmark.pages.results import render_results_page
from tools.common import REPO, machine_summary

CONFIG = 'configs/an/an_vgg11bn_demo.py'
GROUPS = ('writes', 'runs', 'divergence', 'data', 'misuse', 'preflight',
          'inputs', 'teacher')
RESULTS = ('right result', 'clear error', 'silent wrong answer', 'crash',
           'data lost')
PROMISED = RESULTS[:2]

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
custom_hooks = [dict(type='SafeCheckpointHook'),
                dict(type='SPMLDatasetCheckHook')] + {extra}
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
        env = dict(os.environ, PYTHONPATH=f'{self.tmp}:{REPO}', **(env or {}))
        proc = subprocess.run(
            [sys.executable] + args,
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout)
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


def resumable(bench: Bench, work: str) -> str:
    """Resume ``work`` to epoch 2 and say from where."""
    path = find_last_checkpoint(work)
    ckpt = load_checkpoint_safely(path)
    epoch = ckpt['meta']['epoch']
    rc, log = bench.train(work, '--resume')
    ok = rc == 0 and osp.isfile(osp.join(work, 'epoch_2.pth'))
    return (f'last_checkpoint names {osp.basename(path)} (complete, epoch '
            f'{epoch}); --resume {"finished epoch 2" if ok else "FAILED"}'), ok


def write_fault(bench, fault, at, what):
    work = osp.join(bench.tmp, f'{fault}{at}')
    rc, log = bench.train(work, env=dict(FAULT=fault, FAULT_AT=str(at)))
    how = ('killed (SIGKILL)' if rc in (-9, 137) else
           'stopped: ' + error_line(log, 'OSError: [Errno 28]')[:60])
    text, ok = resumable(bench, work)
    return f'{fault.replace("_in_write", "")} halfway through {what}', \
        f'{how}; {text}', judged(ok and rc != 0, 'right result', 'data lost')


def scenarios(bench: Bench, groups):
    """Yield the scenarios of ``groups``; each returns (fault, outcome,
    one of :data:`RESULTS`)."""
    if 'writes' in groups:
        # epoch 2 writes: #6 epoch_2.pth, #7 last_checkpoint, #8 the new
        # best, #9 epoch_2.pth again, #10 last_checkpoint
        for fault in ('kill_in_write', 'enospc_in_write'):
            for at, what in ((6, 'epoch_2.pth'), (7, 'last_checkpoint'),
                             (8, 'the new best checkpoint')):
                yield lambda f=fault, a=at, w=what: write_fault(
                    bench, f, a, w)
        yield lambda: kill_before_best_removal(bench)
    if 'runs' in groups:
        yield lambda: resume_from_other_run(bench)
        yield lambda: moved_work_dir(bench)
        yield lambda: weights_only_resume(bench)
        yield lambda: early_stopping_after_kill(bench)
        yield lambda: other_constructor_resume(bench)
        yield lambda: older_metainfo_resume(bench)
    if 'divergence' in groups:
        yield lambda: nan_loss(bench)
        yield lambda: inf_gradient(bench)
        yield lambda: inf_learning_rate(bench)
        yield lambda: nan_hyperparameter(bench)
        yield lambda: hung_rank(bench)
    if 'data' in groups:
        yield from bad_data(bench)
    if 'misuse' in groups:
        yield from misuse(bench)
    if 'preflight' in groups:
        yield from preflight(bench)
    if 'inputs' in groups:
        yield from inputs(bench)
    if 'teacher' in groups:
        yield from teacher(bench)


def best_files(work):
    return sorted(f for f in os.listdir(work) if f.startswith('best_'))


def kill_before_best_removal(bench):
    """A kill after epoch 2's checkpoint was written again with the new best
    (write #10, last_checkpoint), before the previous best's removal."""
    work = osp.join(bench.tmp, 'two_best')
    rc, _ = bench.train(work, env=dict(FAULT='kill_in_write', FAULT_AT='10'))
    left = best_files(work)
    rc2, out = bench.run(['tools/best_checkpoint.py', work])
    named = next((osp.basename(line) for line in out.splitlines()
                  if rc2 == 0 and line.endswith('.pth')), None)
    rc3, _ = bench.train(work, '--resume')
    kept = best_files(work)
    ok = len(left) == 2 and rc3 == 0 and kept == [named]
    return ('kill after the new best checkpoint, before the previous best\'s '
            'removal', f'killed ({rc}) with {" and ".join(left)}; '
            f'tools/best_checkpoint.py names {named}; --resume removed the '
            f'other, keeps {", ".join(kept)}',
            judged(ok and rc != 0, 'right result', 'silent wrong answer'))


def early_stopping_after_kill(bench):
    """Early stopping (patience 2) killed in the epoch after which the
    uninterrupted run stops, then resumed."""
    case = ('early stopping (patience 2) killed in its last epoch, then '
            '--resume')
    options = ['--cfg-options',
               'default_hooks.early_stopping.type=SPMLEarlyStoppingHook',
               'default_hooks.early_stopping.patience=2',
               'train_dataloader.dataset.indices=64']
    full, part = (osp.join(bench.tmp, n) for n in ('stop_full', 'stop_kill'))
    _, log = bench.train(full, *options, epochs=12)
    found = re.search(r'Early stopping after epoch (\d+)', log)
    if not found:
        return case, 'FAILED: the uninterrupted run did not stop', 'crash'
    stop = int(found.group(1))
    config = bench.config(extra=f"[dict(type='KillInTrainHook', "
                          f'epoch={stop})]')
    rc, _ = bench.train(part, *options, config=config, epochs=12)
    rc2, log2 = bench.train(part, '--resume', *options, epochs=12)
    validated = re.findall(r'Epoch\(val\) \[(\d+)\]', log2)
    ended = int(validated[-1]) if validated else None
    same = best_files(part) == best_files(full)
    return (case, f'uninterrupted: stops after epoch {stop}, keeps '
            f'{", ".join(best_files(full))}; killed ({rc}), resumed: stops '
            f'after epoch {ended}, keeps {", ".join(best_files(part))}',
            judged(rc2 == 0 and ended == stop and same, 'right result',
                   'silent wrong answer' if rc2 == 0 else 'crash'))


def other_constructor_resume(bench):
    """A GroupedOptimWrapperConstructor checkpoint with the head's rate at
    10x (as GR's configs: two groups) resumed under MMEngine's constructor,
    a group per parameter."""
    work = osp.join(bench.tmp, 'grouped')
    head = ['--cfg-options',
            'optim_wrapper.paramwise_cfg.custom_keys.head.lr_mult=10.']
    bench.train(work, *head, epochs=1)
    rc, log = bench.train(
        work, '--resume', *head,
        'optim_wrapper.constructor=DefaultOptimWrapperConstructor')
    line = error_line(log, 'cannot resume the optimizer state')
    return ('--resume of a GroupedOptimWrapperConstructor checkpoint under '
            "MMEngine's constructor", f'refused: '
            f'{line[line.find("it has"):][:110]}...',
            judged('optim_wrapper.constructor=Grouped' in line,
                   refusal(rc, line), 'crash'))


def older_metainfo_resume(bench):
    """A checkpoint written before the datasets' metainfo had ``split``."""
    import torch
    work = copied_run(bench, 'older_meta')
    path = osp.join(work, 'epoch_1.pth')
    ckpt = torch.load(path, weights_only=True)
    del ckpt['meta']['dataset_meta']['split']
    torch.save(ckpt, path)
    rc, log = bench.train(work, '--resume')
    warned = 'dataset metainfo from the resumed checkpoint is different' in log
    return ('--resume of a checkpoint whose dataset metainfo lacks split '
            '(older plugin), same classes',
            ('trained to epoch 2' if rc == 0 else 'FAILED') +
            (', WARNED of another dataset' if warned else ', no warning'),
            judged(rc == 0 and not warned, 'right result',
                   'silent wrong answer' if rc == 0 else 'crash'))


def resume_from_other_run(bench):
    first, second = (osp.join(bench.tmp, n) for n in ('first', 'second'))
    bench.train(first, epochs=1)
    before = sorted(os.listdir(first))
    rc, _ = bench.train(second, '--resume', osp.join(first, 'epoch_1.pth'))
    after = sorted(os.listdir(first))
    result = ('data lost' if before != after else
              judged(rc == 0, 'right result', 'crash'))
    return ('--resume PATH into another run\'s work dir',
            f'trained to epoch 2; the other run\'s files '
            f'{"untouched" if before == after else "CHANGED"}', result)


def moved_work_dir(bench):
    work = osp.join(bench.tmp, 'moved_src')
    bench.train(work, epochs=1)
    moved = osp.join(bench.tmp, 'moved_dst')
    shutil.move(work, moved)
    rc, log = bench.train(moved, '--resume')
    return recovered('work dir moved, then --resume', rc, log,
                     'resumed epoch: 1',
                     'resumed epoch 1 from the moved folder')


def weights_only_resume(bench):
    work = osp.join(bench.tmp, 'bare')
    bench.train(work, epochs=1)
    import torch
    ckpt = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)
    del ckpt['optimizer']
    bare = osp.join(bench.tmp, 'weights_only.pth')
    torch.save(ckpt, bare)
    rc, log = bench.train(osp.join(bench.tmp, 'bare2'), '--resume', bare)
    refused = rc != 0 and 'cannot resume from' in log
    rc2, _ = bench.train(osp.join(bench.tmp, 'bare3'), '--resume-weights-only',
                         bare)
    return ('--resume from a checkpoint without optimizer state',
            ('refused: "' + error_line(log, 'cannot resume from')[:70] +
             '..."; --resume-weights-only ' +
             ('trained on' if rc2 == 0 else 'FAILED')),
            judged(refused and rc2 == 0, 'clear error', refusal(rc, '')))


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


def nan_loss(bench):
    line, result, saved = stopped_with(
        bench, 'nan', ['--cfg-options', 'optim_wrapper.optimizer.lr=1e30'],
        'DivergenceError: ')
    return ('learning rate 1e30 (loss becomes NaN)',
            f'stopped: {line[:90]}...; checkpoints saved: {len(saved)}',
            judged(not saved, result, 'silent wrong answer'))


def inf_gradient(bench):
    line, result, _ = stopped_with(
        bench, 'infgrad', [], 'DivergenceError: ',
        config=bench.config(extra="[dict(type='InfGradHook', at=2)]"))
    return ('infinite gradient at iteration 2 (finite loss)',
            f'stopped: {line[:90]}...',
            judged('gradient norm' in line, result, 'crash'))


def inf_learning_rate(bench):
    line, result, _ = stopped_with(
        bench, 'inflr', ['--cfg-options', 'optim_wrapper.optimizer.lr=inf'],
        'ValueError: ')
    return ('optim_wrapper.optimizer.lr=inf', f'refused: {line[:90]}',
            result)


def nan_hyperparameter(bench):
    config = bench.config(more="model = dict(head=dict(loss=dict("
                          "_delete_=True, type='EMLoss', alpha=float('nan'), "
                          "beta=0.1)))")
    line, result, _ = stopped_with(bench, 'nanalpha', [], 'alpha must be',
                                   config=config)
    return ('EMLoss alpha=nan', f'refused: {line[:90]}', result)


def hung_rank(bench):
    config = bench.config(
        extra="[dict(type='SleepOnRankHook', rank=1, seconds=120)]",
        more='env_cfg = dict(dist_cfg=dict(timeout=3))')
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PORT=str(port), PYTHON=sys.executable,
               PYTHONPATH=bench.tmp)
    start = time.time()
    proc = subprocess.run(
        ['bash', 'tools/dist_train.sh', config, '2', '--work-dir',
         osp.join(bench.tmp, 'hung')] + bench.options(epochs=1),
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    line = error_line(proc.stderr, 'DistributedTimeoutError:')
    return ('rank 1 of 2 hangs, env_cfg.dist_cfg.timeout=3',
            f'job ended after {time.time() - start:.0f} s: '
            f'{line.split("DistributedTimeoutError: ")[-1][:80]}...',
            refusal(proc.returncode, line))


def bad_data(bench):
    root = osp.join(bench.tmp, 'bad_demo')
    shutil.copytree(bench.data, root)
    images = np.load(osp.join(root, 'formatted_train_images.npy'))
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    train_idx = split_train_val(len(labels), 0.2, 1200)[0]
    several = next(i for i in train_idx if labels[i].sum() >= 2)
    rows = [several] + [i for i in train_idx if i != several][:7]
    observed = np.zeros_like(labels)
    observed[np.arange(len(labels)), labels.argmax(1)] = 1
    observed[rows[0]] = labels[rows[0]]  # several positives
    observed[rows[1]] = 0  # none
    observed[rows[2]] = 0
    observed[rows[2], np.flatnonzero(labels[rows[2]] == 0)[0]] = 1
    observed[rows[3], 0] = 5
    labels[rows[4], 0] = 2
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    np.save(osp.join(root, 'formatted_train_labels_obs.npy'), observed)
    os.remove(osp.join(root, images[rows[5]]))
    open(osp.join(root, images[rows[6]]), 'wb').close()
    with open(osp.join(root, images[rows[7]]), 'wb') as f:
        f.write(b'not an image')
    rc, log = bench.run(['tools/check_dataset.py', CONFIG, '--decode'] +
                        bench.options(data=root)[:1] + bench.options(
                            data=root)[2:])
    cases = [
        ('image file missing', 'image file missing'),
        ('0-byte image', 'image file is empty (0 bytes)'),
        ('corrupt image (--decode)', 'image cannot be decoded'),
        ('label value 2', 'they must be 0/1'),
        ('observed label value 5', 'they must be -1/0/1'),
        ('two observed positives', 'observed positives'),
        ('no observed positive', 'no observed positive'),
        ('observed positive on a negative class', 'is observed +1 but'),
    ]
    for name, expect in cases:
        line = error_line(log, expect)
        yield lambda n=name, ln=line: (
            f'{n}: tools/check_dataset.py', 'reported: ' + (
                ln.split('): ', 1)[-1][:70] + ' (with file and row)'
                if ln else 'NOT REPORTED'), refusal(rc, ln))
    path = osp.join(bench.tmp, 'bad.json')
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=['a']),
                       data_list=[dict(img_path='a.jpg', gt_label=[0]), 7]),
                  f)
    from spml_mm.datasets import load_multilabel_annotations
    try:
        load_multilabel_annotations(path)
        message, result = 'accepted', 'silent wrong answer'
    except ValueError as err:
        message, result = str(err).splitlines()[-1].strip(), 'clear error'
    except TypeError as err:
        message, result = f'TypeError: {err}', 'crash'
    yield lambda: ('JSON data_list entry that is an int',
                   f'refused: {message.replace(bench.tmp, "")[:80]}',
                   result)
    line, result, _ = stopped_with(
        bench, 'heads', ['--cfg-options', 'model.head.num_classes=7'],
        'ValueError: model.head.num_classes=7')
    yield lambda: ('head num_classes=7, dataset 10 classes',
                   f'refused: {line[:90]}', result)


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


def test_run(bench, checkpoint, *options):
    return bench.run(['tools/test.py', bench.config(), checkpoint] +
                     bench.options() + list(options))


def snapshot(folder):
    """Every file's name and bytes below ``folder``."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = osp.join(root, name)
            with open(path, 'rb') as f:
                found[osp.relpath(path, folder)] = f.read()
    return found


def first_detail(log, name):
    """The error line with ``name`` and the one after it (the first thing
    that differs)."""
    lines = log.splitlines()
    for k in range(len(lines) - 1, -1, -1):
        if name in lines[k]:
            detail = lines[k + 1].strip() if k + 1 < len(lines) else ''
            return lines[k].split(': ', 1)[-1].strip(), detail
    return '', ''


def other_architecture(bench):
    ckpt = osp.join(trained_run(bench), 'epoch_1.pth')
    rc, log = test_run(bench, ckpt, 'model.backbone.depth=13')
    line, detail = first_detail(log, 'CheckpointMismatchError')
    rc2, log2 = test_run(bench, ckpt, 'model.backbone.depth=13',
                         'load_strict=False')
    scored = rc2 == 0 and 'Epoch(test)' in log2
    return ('tools/test.py: a VGG-11 checkpoint under a VGG-13 config',
            f'refused: "{detail[:70]}..."; load_strict=False scores it'
            f'{"" if scored else " (FAILED)"}',
            judged(scored, refusal(rc, line), 'crash'))


def other_method(bench):
    ckpt = osp.join(trained_run(bench), 'epoch_1.pth')
    config = bench.config(base='configs/em/em_vgg11bn_demo.py')
    rc, log = bench.train(osp.join(bench.tmp, 'em_from_an'), '--resume',
                          ckpt, config=config)
    line, detail = first_detail(log, 'CheckpointMismatchError')
    return ('--resume of an AN checkpoint under the EM config',
            f'refused: "{detail}"', refusal(rc, line))


def concurrent_runs(bench):
    work = osp.join(bench.tmp, 'shared')
    env = dict(os.environ, PYTHONPATH=f'{bench.tmp}:{REPO}')
    first = subprocess.Popen(
        [sys.executable, 'tools/train.py', bench.config(), '--work-dir',
         work] + bench.options(), cwd=REPO, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not osp.isfile(osp.join(work, 'spml_run.lock')) and \
            first.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    rc, log = bench.train(work)
    first.wait(timeout=600)
    line = error_line(log, 'WorkDirInUseError')
    finished = first.returncode == 0 and osp.isfile(
        osp.join(work, 'epoch_2.pth'))
    return ('a second run started in the work dir of a running one',
            f'refused: "{line.split(": ", 1)[-1][:80]}..."; the first run '
            f'{"finished" if finished else "FAILED"}',
            judged(finished, refusal(rc, line), 'data lost'))


def reused_work_dir(bench):
    work = copied_run(bench, 'reused')
    before = snapshot(work)
    rc, log = bench.train(work)
    line = error_line(log, 'WorkDirInUseError')
    kept = all(snapshot(work).get(k) == v for k, v in before.items())
    return ('a new run (no --resume) in a work dir with checkpoints',
            f'refused: "{line.split(": ", 1)[-1][:80]}..."; files '
            f'{"untouched" if kept else "CHANGED"}',
            judged(kept, refusal(rc, line), 'data lost'))


def stale_lock(bench):
    work = osp.join(bench.tmp, 'stale')
    os.makedirs(work)
    dead = subprocess.run([sys.executable, '-c', 'import os; print('
                           'os.getpid())'], capture_output=True, text=True)
    with open(osp.join(work, 'spml_run.lock'), 'w') as f:
        json.dump(dict(pid=int(dead.stdout), host=socket.gethostname()), f)
    rc, log = bench.train(work, epochs=1)
    return recovered('the lock file of a killed run left in the work dir',
                     rc, log, 'Recovering the stale lock',
                     'recovered with a message; trained')


def foreign_partial(bench):
    work = osp.join(bench.tmp, 'own_files')
    os.makedirs(work)
    mine = osp.join(work, 'weights.pth.partial')
    with open(mine, 'wb') as f:
        f.write(b'a download in progress')
    rc, _ = bench.train(work, epochs=1)
    kept = osp.isfile(mine) and open(mine, 'rb').read() == \
        b'a download in progress'
    return ('a file of the user named *.partial in the work dir',
            f'{"kept" if kept else "DELETED"}; trained '
            f'{"on" if rc == 0 else "FAILED"}',
            'data lost' if not kept else judged(rc == 0, 'right result',
                                                'crash'))


def kill_in_last_validation(bench):
    work = osp.join(bench.tmp, 'kill_in_val')
    config = bench.config(extra="[dict(type='KillInValHook', epoch=2)]")
    rc, _ = bench.train(work, config=config)
    rc2, log = bench.train(work, '--resume')
    validated = re.search(r'Epoch\(val\) \[2\]', log) is not None
    ok = rc2 == 0 and validated
    done = 'validated epoch 2' if ok else 'did NOT validate epoch 2'
    return ('kill during the last epoch\'s validation, then --resume',
            f'killed ({rc}); --resume {done}',
            judged(ok, 'right result',
                   'silent wrong answer' if rc2 == 0 else 'crash'))


def damaged_checkpoint(bench, damage, tool):
    work = copied_run(bench, f'{damage}_{tool}')
    ckpt = osp.join(work, 'epoch_1.pth')
    with open(ckpt, 'rb') as f:
        data = f.read()
    with open(ckpt, 'wb') as f:
        f.write(data[:len(data) // 2] if damage == 'truncated' else b'')
    if tool == 'test':
        rc, log = test_run(bench, ckpt)
    else:
        rc, log = bench.train(work, '--resume')
    line = error_line(log, 'is damaged')
    named = 'best_spml_mAP_epoch_1.pth' in line
    how = 'tools/test.py' if tool == 'test' else '--resume'
    return (f'{damage} checkpoint, {how}',
            f'refused: names it and the intact '
            f'{"best_spml_mAP_epoch_1.pth" if named else "NONE"} with the '
            'commands', judged(named, refusal(rc, line), 'crash'))


def bad_file(bench, name, damage, expect):
    root = osp.join(bench.tmp, f'data_{name}')
    shutil.copytree(bench.data, root, ignore=shutil.ignore_patterns('images'))
    os.symlink(osp.join(bench.data, 'images'), osp.join(root, 'images'))
    damage(root)
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         osp.join(bench.tmp, f'work_{name}')] +
                        bench.options(data=root, epochs=1))
    line = error_line(log, expect)
    return line.replace(root + '/', ''), refusal(rc, line)


def object_image_list(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_images.npy')
        np.save(path, np.load(path).astype(object), allow_pickle=True)

    line, result = bad_file(bench, 'objects', damage, 'object array')
    return ('image list saved as an object array',
            f'refused: {line.split("Error: ", 1)[-1][:80]}...', result)


def train_label(bench, value):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels.npy')
        labels = np.load(path).astype(float)
        labels[5, 0] = value
        np.save(path, labels)

    line, result = bad_file(bench, f'label{value}', damage, 'labels hold')
    return (f'training-split label {value} (observations drawn by the '
            'loader)', f'refused: {line.strip()[:90]}', result)


def setting(bench, name, fault, options, expect, base=CONFIG, epochs=1):
    args = ['--cfg-options'] + options if options else []
    line, result, _ = stopped_with(bench, name, args, expect,
                                   config=bench.config(base=base),
                                   epochs=epochs)
    return fault, f'refused: {line.split("Error: ", 1)[-1][:90]}', result


def misuse(bench):
    yield lambda: other_architecture(bench)
    yield lambda: other_method(bench)
    yield lambda: concurrent_runs(bench)
    yield lambda: reused_work_dir(bench)
    yield lambda: stale_lock(bench)
    yield lambda: foreign_partial(bench)
    yield lambda: kill_in_last_validation(bench)
    for damage in ('truncated', 'empty'):
        for tool in ('test', 'resume'):
            yield lambda d=damage, t=tool: damaged_checkpoint(bench, d, t)
    yield lambda: object_image_list(bench)
    for value in (0.5, float('nan')):
        yield lambda v=value: train_label(bench, v)
    yield lambda: setting(bench, 'zero', 'train_cfg.max_epochs=0', [],
                          'max_epochs=0', epochs=0)
    yield lambda: setting(
        bench, 'rolek', 'ROLE expected_positives=12 with 10 classes',
        ['model.head.loss.expected_positives=12'], 'exceeds',
        base='configs/role/role_vgg11bn_demo.py')


# ------------------------------------------------------------- preflight
#: The first line of a training iteration in the log.
TRAIN_LINE = 'Epoch(train)'


def before_training(log: str, marker: str) -> bool:
    """``marker`` is logged, and before any training iteration."""
    at = log.find(marker)
    train = log.find(TRAIN_LINE)
    return at >= 0 and (train < 0 or at < train)


def refused_before_training(bench, name, options, expect, base=CONFIG,
                            epochs=1):
    """A run that must stop before its first iteration with ``expect``:
    (outcome, result)."""
    work = osp.join(bench.tmp, name)
    rc, log = bench.run(['tools/train.py', bench.config(base=base),
                         '--work-dir', work] +
                        bench.options(epochs=epochs) + options)
    line = error_line(log, expect)
    trained = TRAIN_LINE in log or (osp.isdir(work) and any(
        f.endswith('.pth') for f in os.listdir(work)))
    outcome = (f'refused before training: {line.split("Error: ", 1)[-1]}'
               if line and not trained else
               f'{"trained" if trained else "stopped"}: '
               f'{error_line(log, "Error") or "exit " + str(rc)}')
    return outcome[:150], judged(not trained, refusal(rc, line),
                                 'silent wrong answer')


def fast_recipe(bench):
    import torch
    config = osp.join(bench.tmp, 'fast.py')
    with open(config, 'w') as f:
        f.write(f"_base_ = ['{bench.config()}', "
                "'spml_mm::_base_/runtime_gpu_fast.py']\n")
    work = osp.join(bench.tmp, 'fast')
    rc, log = bench.run(['tools/train.py', config, '--work-dir', work] +
                        bench.options(epochs=1) +
                        ['train_dataloader.dataset.indices=64'])
    if torch.cuda.is_available():
        ok = rc == 0 and osp.isfile(osp.join(work, 'epoch_1.pth'))
        return ('GPU fast recipe (runtime_gpu_fast.py) via tools/train.py',
                'trained 1 epoch' if ok else
                f'FAILED: {error_line(log, "Error")[:100]}',
                judged(ok, 'right result', 'crash'))
    line = error_line(log, "runner_type='SPMLGPUFastRunner' is the GPU")
    trained = TRAIN_LINE in log
    return ('GPU fast recipe (runtime_gpu_fast.py) via tools/train.py, no '
            'CUDA', f'refused before training: {line[14:120]}...'
            if line and not trained else
            f'FAILED: {error_line(log, "Error")[:100]}',
            judged(not trained, refusal(rc, line), 'silent wrong answer'))


def observed_default(bench, base, name):
    """Validation on observed labels with the default selection keys."""
    work = osp.join(bench.tmp, name)
    rc, log = bench.run(['tools/train.py', bench.config(base=base),
                         '--work-dir', work] + bench.options(epochs=2) +
                        ['val_dataloader.dataset.val_labels=observed'])
    best = [f for f in os.listdir(work) if f.startswith('best_')] \
        if osp.isdir(work) else []
    ok = (rc == 0 and best and all('mAP_observed' in b for b in best)
          and "save_best='auto' selects on spml/mAP_observed" in log
          and 'Epoch(val) [1]' in log)
    stop = error_line(log, 'Early stopping after epoch')
    return (f'val_labels=observed, default keys ({osp.basename(base)})',
            (f'validated on spml/mAP_observed, best: {", ".join(best)}'
             + (f'; {stop[stop.find("Early"):][:60]}' if stop else ''))
            if ok else f'FAILED: {error_line(log, "Error")[:100]}',
            judged(ok, 'right result', refusal(rc, '')))


def observed_wrong_key(bench):
    outcome, result = refused_before_training(
        bench, 'observed_wrong', [
            'val_dataloader.dataset.val_labels=observed',
            'default_hooks.checkpoint.save_best=spml/mAP'
        ], "save_best='spml/mAP' names a metric")
    return ('val_labels=observed, explicit save_best=spml/mAP', outcome,
            result)


def subset_without_class(bench):
    work = osp.join(bench.tmp, 'subset3')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         work] + bench.options(epochs=1) +
                        ['val_dataloader.dataset.val_full_subset=3'])
    line = error_line(log, 'classes without an AP are left out')
    counted = re.search(r'spml/mAP and spml/mAP_observed over \d+ of 10 '
                        r'classes: \d+ without a positive', line)
    ok = rc == 0 and counted and before_training(log, line)
    return ('val_full_subset=3: classes without a positive',
            f'warned before training: {counted.group(0)} (named); trained'
            if ok else f'FAILED: {line[:100] or error_line(log, "Error")}',
            judged(ok, 'right result', 'silent wrong answer'))


def split_without_positive(bench):
    root = osp.join(bench.tmp, 'no_val_positive')
    shutil.copytree(bench.data, root, ignore=shutil.ignore_patterns('images'))
    os.symlink(osp.join(bench.data, 'images'), osp.join(root, 'images'))
    path = osp.join(root, 'formatted_train_labels.npy')
    labels = np.load(path)
    labels[split_train_val(len(labels), 0.2, 1200)[1]] = 0
    np.save(path, labels)
    work = osp.join(bench.tmp, 'no_val_positive_work')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         work] + bench.options(data=root, epochs=1))
    line = error_line(log, 'no class has a positive')
    trained = TRAIN_LINE in log
    return ('validation split without any positive',
            f'refused before training: {line.split("Error: ", 1)[-1][:100]}'
            if line and not trained else
            f'FAILED: {error_line(log, "Error")[:100]}',
            judged(not trained, refusal(rc, line), 'silent wrong answer'))


def validation_crash(bench):
    """A validation pipeline at 4 px: the model fails on the first sanity
    batch, and the note names the part and its config keys."""
    more = ("val_dataloader = dict(dataset=dict(pipeline=["
            "dict(type='LoadImageFromFile'), dict(type='Resize', scale=4), "
            "dict(type='PackInputs', algorithm_keys=('gt_label_neg', ))]))")
    work = osp.join(bench.tmp, 'small_val')
    rc, log = bench.run(['tools/train.py', bench.config(more=more),
                         '--work-dir', work] + bench.options(epochs=1))
    line = error_line(log, 'Raised by SPMLPreflightHook')
    named = 'look at model' in line and \
        'val_dataloader.dataset.pipeline' in line
    return ('validation pipeline at 4 px (the model fails on its images)',
            'stopped before training: the error, then '
            f'"{line[line.find("in the model"):][:110]}..."' if named else
            f'FAILED: {line[:100] or error_line(log, "Error")[:100]}',
            judged(named and TRAIN_LINE not in log, refusal(rc, line),
                   'crash'))


def expression_option(bench):
    """A pipeline written in --cfg-options as a list of dict(...) calls."""
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         osp.join(bench.tmp, 'expression')] +
                        bench.options(epochs=1) + [
                            "val_dataloader.dataset.pipeline=["
                            "dict(type='LoadImageFromFile'), "
                            "dict(type='Resize', scale=4)]"])
    line = error_line(log, 'is an expression, which is not parsed')
    return ('--cfg-options KEY=[dict(type=..., a=1), ...]',
            f'refused: {line.split("parsed: ", 1)[-1][:90]}' if line else
            f'FAILED: {error_line(log, "Error")[:100]}',
            refusal(rc, line))


def preflight(bench):
    yield lambda: fast_recipe(bench)
    yield lambda: observed_default(bench, CONFIG, 'observed_an')
    yield lambda: observed_default(bench,
                                   'configs/grloss/grloss_vgg11bn_demo.py',
                                   'observed_gr')
    yield lambda: observed_wrong_key(bench)
    yield lambda: subset_without_class(bench)
    yield lambda: split_without_positive(bench)
    yield lambda: validation_crash(bench)
    yield lambda: expression_option(bench)


# ----------------------------------------------------------------- inputs
# Bad inputs of the features added since the first fault page (issue 41,
# part B): the dataset check, pretrained weights offline, resuming across
# class counts, damaged run files, paths with spaces, result pages.


def data_copy(bench, name, damage=None):
    """A copy of the demo data (images linked) with ``damage`` applied."""
    root = osp.join(bench.tmp, name)
    os.makedirs(osp.dirname(root), exist_ok=True)
    shutil.copytree(bench.data, root, ignore=shutil.ignore_patterns('images'))
    os.symlink(osp.join(bench.data, 'images'), osp.join(root, 'images'))
    if damage is not None:
        damage(root)
    return root


def train_on(bench, name, root, *extra, config=None, epochs=1):
    """tools/train.py on the data at ``root`` in a new work dir."""
    work = osp.join(bench.tmp, f'work_{name}')
    rc, log = bench.run(['tools/train.py', config or bench.config(),
                         '--work-dir', work] + bench.options(
                             data=root, epochs=epochs) + list(extra))
    return work, rc, log


def checkpoints_in(work):
    return [f for f in os.listdir(work) if f.endswith('.pth')
            ] if osp.isdir(work) else []


def duplicated_list(bench):
    def damage(root):
        images = np.load(osp.join(root, 'formatted_train_images.npy'))
        labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
        train_idx, val_idx = split_train_val(len(labels), 0.2, 1200)
        t = next(i for i in train_idx if labels[i].any())
        v = next(i for i in val_idx if (labels[i] != labels[t]).any())
        images[v] = images[t]
        np.save(osp.join(root, 'formatted_train_images.npy'), images)

    root = data_copy(bench, 'dup_data', damage)
    rc, log = bench.run(['tools/check_dataset.py', CONFIG] +
                        bench.options(data=root)[:1] +
                        bench.options(data=root)[2:])
    line = error_line(log, 'is in both the train split')
    yield lambda: ('an image listed twice with other labels, across the '
                   'train/val split: tools/check_dataset.py',
                   'reported: image ' + (line[line.find('is in both'):][:80]
                                         + '...' if line else 'NOT REPORTED'),
                   refusal(rc, line))
    work, rc, log = train_on(bench, 'dup', root)
    line = error_line(log, 'DatasetError: ')
    yield lambda: ('the same list: tools/train.py',
                   f'refused before training: {line[:80]}...; checkpoints: '
                   f'{len(checkpoints_in(work))}',
                   judged(not checkpoints_in(work), refusal(rc, line),
                          'silent wrong answer'))


def class_without_positive(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels.npy')
        labels = np.load(path)
        labels[:, 3] = 0
        np.save(path, labels)

    root = data_copy(bench, 'gap_data', damage)
    rc, log = bench.run(['tools/check_dataset.py', CONFIG] +
                        bench.options(data=root)[:1] +
                        bench.options(data=root)[2:])
    line = error_line(log, 'have no positive label in the training split')
    work, rc2, log2 = train_on(bench, 'gap', root)
    warned = 'have no positive label in the training split' in log2
    return ('class 3 without a positive in the training split',
            f'check_dataset.py warns: {line.split(": ", 2)[-1][:60]}...; '
            f'tools/train.py {"warns and trains" if warned else "SILENT"}',
            judged(rc == 0 and rc2 == 0 and bool(line) and warned,
                   'right result', 'silent wrong answer'))


def gr_q3_inf(bench):
    line, result, _ = stopped_with(
        bench, 'grq3', ['--cfg-options', 'model.head.loss.q3=inf'],
        'q3 must be finite',
        config=bench.config(base='configs/grloss/grloss_vgg11bn_demo.py'))
    return ('GRLoss q3=inf', f'refused: {line.split("Error: ", 1)[-1][:60]}',
            result)


def offline_weights(bench):
    env = dict(TORCH_HOME=osp.join(bench.tmp, 'torch_home'),
               https_proxy='http://127.0.0.1:9', http_proxy='')
    config = bench.config(base='configs/grloss/resnet50_voc.py')
    work = osp.join(bench.tmp, 'offline')
    rc, log = bench.run(['tools/train.py', config, '--work-dir', work],
                        env=env)
    line = error_line(log, 'PretrainedWeightsError: ')
    named = 'resnet50-0676ba61.pth' in line and 'torch_home' in line
    yield lambda: ('configs/grloss/resnet50_voc.py without internet access',
                   'refused: names the file, the torch hub cache to place it '
                   'in and model.backbone.init_cfg.checkpoint' if named else
                   f'{line[:80]}', judged(named, refusal(rc, line), 'crash'))
    missing = osp.join(bench.tmp, 'checkpoints',
                       'efficientnet-lite0_timm.pth')
    rc, log = bench.run([
        'tools/train.py',
        bench.config(base='configs/grloss/efficientnet-lite0_proxy-voc.py'),
        '--work-dir', osp.join(bench.tmp, 'no_lite0'), '--cfg-options',
        f'model.backbone.init_cfg.checkpoint={missing}'
    ])
    line = error_line(log, 'PretrainedWeightsError: ')
    named = 'tools/convert_efficientnet_lite.py' in line
    yield lambda: ('fine-tuned proxy config without the converted '
                   'EfficientNet-Lite0 weights',
                   'refused: names the key and the command that makes the '
                   'file' if named else f'{line[:80]}',
                   judged(named, refusal(rc, line), 'crash'))


def resume_other_classes(bench):
    def fewer(root):
        for split in ('train', 'val'):
            path = osp.join(root, f'formatted_{split}_labels.npy')
            np.save(path, np.load(path)[:, :8])
        if osp.isfile(osp.join(root, 'classes.txt')):
            with open(osp.join(root, 'classes.txt')) as f:
                names = f.read().split()[:8]
            with open(osp.join(root, 'classes.txt'), 'w') as f:
                f.write('\n'.join(names) + '\n')

    ckpt = osp.join(trained_run(bench), 'epoch_1.pth')
    root = data_copy(bench, 'eight_classes', fewer)
    work = osp.join(bench.tmp, 'work_eight')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir', work,
                         '--resume', ckpt] + bench.options(data=root) +
                        ['load_strict=False', 'model.head.num_classes=8'])
    warned = 'the optimizer state of' in log
    ok = rc == 0 and warned and osp.isfile(osp.join(work, 'epoch_2.pth'))
    return ('--resume a 10-class checkpoint under 8 classes, '
            'load_strict=False',
            'trained epoch 2; the head\'s optimizer state restarted with a '
            'warning' if ok else f'FAILED ({error_line(log, "Error")[:70]})',
            judged(ok, 'right result', 'crash'))


def empty_last_checkpoint(bench):
    work = copied_run(bench, 'empty_record')
    open(osp.join(work, 'last_checkpoint'), 'w').close()
    rc, log = bench.train(work, '--resume')
    line = error_line(log, 'is empty')
    return ('an empty last_checkpoint, --resume',
            f'refused: {line.split(work + "/", 1)[-1][:80]}',
            refusal(rc, line))


def text_as_npy(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels_obs.npy')
        np.savetxt(path, np.zeros((3, 10)))

    line, result = bad_file(bench, 'text_obs', damage, 'is not a .npy file')
    return ('a text file saved as formatted_train_labels_obs.npy',
            f'refused: {line.split("Error: ", 1)[-1][:80]}...', result)


def unreadable_lock(bench):
    work = osp.join(bench.tmp, 'bad_lock')
    os.makedirs(work)
    with open(osp.join(work, 'spml_run.lock'), 'w') as f:
        f.write('{"pid": 12')
    rc, log = bench.train(work, epochs=1)
    line = error_line(log, 'WorkDirInUseError')
    ok = 'cannot be read' in line and 'host ?' not in line
    return ('a damaged lock file in the work dir',
            f'refused: spml_run.lock, '
            f'{line[line.find("which cannot be read"):][:80]}...',
            judged(ok, refusal(rc, line), 'crash'))


def non_object_lock(bench):
    work = osp.join(bench.tmp, 'list_lock')
    os.makedirs(work)
    with open(osp.join(work, 'spml_run.lock'), 'w') as f:
        f.write('[1, 2]')
    rc, log = bench.train(work, epochs=1)
    line = error_line(log, 'WorkDirInUseError')
    ok = 'cannot be read' in line and 'host ?' not in line
    return ('a lock file of valid JSON that is not an object ([1, 2])',
            f'refused: spml_run.lock, '
            f'{line[line.find("which cannot be read"):][:90]}...',
            judged(ok, refusal(rc, line), 'crash'))


def users_spml_partial(bench):
    work = osp.join(bench.tmp, 'spml_partial')
    os.makedirs(work)
    mine = osp.join(work, 'notes.spml.partial')
    with open(mine, 'w') as f:
        f.write('my notes')
    rc, _ = bench.train(work, epochs=1)
    kept = osp.isfile(mine) and open(mine).read() == 'my notes'
    return ('a file of the user named *.spml.partial in the work dir',
            f'{"kept" if kept else "DELETED"}; trained '
            f'{"on" if rc == 0 else "FAILED"}',
            'data lost' if not kept else judged(rc == 0, 'right result',
                                                'crash'))


def spaced_data_root(bench):
    root = data_copy(bench, osp.join('my data', 'demo'))
    work, rc, log = train_on(bench, 'spaced', root)
    ok = rc == 0 and osp.isfile(osp.join(work, 'epoch_1.pth'))
    return ('--cfg-options data_root with a space in the path',
            'trained on it' if ok else
            f'FAILED ({error_line(log, "Error")[:70]})',
            judged(ok, 'right result', 'crash'))


def results_page_default(bench):
    cwd = osp.join(bench.tmp, 'bench_cwd')
    out = osp.join(cwd, 'work_dirs', 'results')
    os.makedirs(out)
    shutil.copy(osp.join(REPO, 'docs', 'results', 'label_bank.json'), out)
    tracked = snapshot(osp.join(REPO, 'docs'))
    proc = subprocess.run(
        [sys.executable, '-m', 'tools.benchmark.label_bank_scale',
         '--render-only'], cwd=cwd, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=REPO), timeout=300)
    kept = snapshot(osp.join(REPO, 'docs')) == tracked
    ok = (proc.returncode == 0 and osp.isfile(osp.join(out, 'label_bank.md'))
          and 'wrote work_dirs/results/label_bank.md' in proc.stdout)
    return ('a benchmark tool run without --out-dir',
            f'wrote work_dirs/results and said so; docs/results '
            f'{"untouched" if kept else "CHANGED"}' if ok else 'FAILED',
            'data lost' if not kept else judged(ok, 'right result', 'crash'))


def gpu_command(*argv, env=None, cwd=REPO):
    """``bash tools/gpu_run.sh ARGV``: exit status and output."""
    proc = subprocess.run(
        ['bash', 'tools/gpu_run.sh', *argv], cwd=cwd, capture_output=True,
        text=True, timeout=600,
        env={**os.environ, 'PYTHON': sys.executable, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def repo_copy(bench, name):
    """The tools, docs and configs of the repository in a folder of the
    bench (a tool that writes into its own docs/results writes there)."""
    root = osp.join(bench.tmp, name)
    for folder in ('tools', 'docs', 'configs'):
        shutil.copytree(osp.join(REPO, folder), osp.join(root, folder),
                        ignore=shutil.ignore_patterns('_build', 'model_zoo',
                                                      '__pycache__'))
    shutil.copy(osp.join(REPO, 'README.md'), root)
    return root


def tool(root, *args):
    """``python ARGS`` in ``root``: exit status and output."""
    proc = subprocess.run([sys.executable, *args], cwd=root,
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def users_stage(bench):
    stage = osp.join(bench.tmp, 'my_stage')
    os.makedirs(stage)
    notes = osp.join(stage, 'notes.txt')
    with open(notes, 'w') as f:
        f.write('my notes')
    for fault, out in (('tools/gpu_run.sh --stage DIR, DIR holding a file '
                        'of the user', osp.join(bench.tmp, 'gpu_out')),
                       ('tools/gpu_run.sh --stage DIR --out DIR', stage)):
        rc, log = gpu_command('--device', 'cpu', '--parts', 'tier',
                              '--budget', '5', '--stage', stage, '--out', out)
        line = error_line(log, 'error: --stage')
        kept = osp.isfile(notes) and open(notes).read() == 'my notes'
        yield lambda f=fault, r=rc, l=line, k=kept: (
            f, f'refused: {l.split("error: ", 1)[-1][:90]}...; notes.txt '
            'kept' if k else 'notes.txt DELETED',
            refusal(r, l) if k else 'data lost')


def collected(bench):
    out = osp.join(bench.tmp, 'cpu_out')
    gpu_command('--device', 'cpu', '--parts', 'tier', '--budget', '5',
                '--stage', osp.join(bench.tmp, 'cpu_stage'), '--out', out)
    root = repo_copy(bench, 'collect_copy')
    results = osp.join(root, 'docs', 'results')
    before = snapshot(results)
    rc, log = tool(root, '-m', 'tools.benchmark.gpu_collect', out)
    line = error_line(log, 'error: ')
    kept = snapshot(results) == before
    yield lambda: ('python -m tools.benchmark.gpu_collect of a command run '
                   'with --device cpu (into docs/results)',
                   f'refused: {line.split("error: ", 1)[-1][:90]}...; the GPU '
                   'pages kept' if kept else 'wrote the CPU run over the '
                   'GPU pages', refusal(rc, line) if kept else
                   'silent wrong answer')
    pack = osp.join(out, 'gpu_run.tar.gz')
    with open(pack, 'r+b') as f:
        f.truncate(osp.getsize(pack) // 2)
    elsewhere = osp.join(bench.tmp, 'elsewhere')
    rc, log = tool(root, '-m', 'tools.benchmark.gpu_collect', out,
                   '--results-dir', elsewhere)
    line = error_line(log, 'error: ')
    named = pack in line and 'Traceback' not in log and not osp.exists(
        elsewhere)
    yield lambda: ('gpu_collect of a gpu_run.tar.gz cut in half',
                   'refused, naming the tarball; nothing written' if named
                   else f'{error_line(log, "Error")[:80]}',
                   judged(named, refusal(rc, line), 'crash'))


def changed_json(bench):
    root = repo_copy(bench, 'tables_copy')
    path = osp.join(root, 'docs', 'results', 'gpu.json')
    with open(path) as f:
        record = json.load(f)
    record['heads']['fp16']['stock']['images_per_s'] *= 2
    with open(path, 'w') as f:
        json.dump(record, f)
    rc, log = tool(root, 'tools/docs_tables.py', '--check')
    line = error_line(log, 'docs/results/gpu.md: ')
    return ('gpu.json\'s fp16 stock row doubled, gpu.md unchanged: '
            'tools/docs_tables.py --check',
            f'named: {line[:90]}...' if line else
            'said every number matches', refusal(rc, line))


def no_openmmlab(bench):
    root = osp.join(bench.tmp, 'bare_checkout')
    os.makedirs(osp.join(root, 'tools'))
    shutil.copy(osp.join(REPO, 'tools', 'gpu_run.sh'),
                osp.join(root, 'tools'))
    rc, log = gpu_command('--out', 'out', env=dict(PYTHON='false'),
                          cwd=root)
    line = error_line(log, '.whl/')
    named = 'bash tools/pack_wheels.sh' in line and osp.isfile(
        osp.join(REPO, 'tools', 'pack_wheels.sh'))
    return ('tools/gpu_run.sh without mmengine/mmpretrain and without '
            '.whl/', 'refused: names bash tools/pack_wheels.sh, which '
            'fills .whl/' if named else f'refused: {line[:90]}',
            judged(named, refusal(rc, line), 'crash'))


def inputs(bench):
    yield from duplicated_list(bench)
    yield lambda: class_without_positive(bench)
    yield lambda: gr_q3_inf(bench)
    yield from offline_weights(bench)
    yield lambda: resume_other_classes(bench)
    yield lambda: empty_last_checkpoint(bench)
    yield lambda: text_as_npy(bench)
    yield lambda: unreadable_lock(bench)
    yield lambda: non_object_lock(bench)
    yield lambda: users_spml_partial(bench)
    yield lambda: spaced_data_root(bench)
    yield lambda: results_page_default(bench)
    yield from users_stage(bench)
    yield from collected(bench)
    yield lambda: changed_json(bench)
    yield lambda: no_openmmlab(bench)


VLPL = 'configs/vlpl/vlpl_vgg11bn_demo.py'
AEVLP = 'configs/aevlp/aevlp_vgg11bn_demo.py'


def teacher_file(bench, path, root=None, noise=0.3, seed=0, crops=0):
    """Write a synthetic teacher's score file of the demo's training set at
    ``root`` (the bench's demo by default) to ``path``; its scores."""
    from mmengine.config import Config
    from mmpretrain.registry import DATASETS

    from spml_mm.benchmarks.synthetic_teacher import write_synthetic_teacher
    cfg = Config.fromfile(osp.join(REPO, VLPL))
    dataset = DATASETS.build(
        dict(cfg.train_dataloader.dataset, data_root=root or bench.data))
    return write_synthetic_teacher(dataset, path, noise, seed, crops)


def teacher_train(bench, name, score_file, *extra, base=VLPL, root=None,
                  epochs=1, resume=None):
    """tools/train.py of a teacher method reading ``score_file``."""
    work = osp.join(bench.tmp, f'teacher_{name}')
    args = ['tools/train.py', bench.config(base=base), '--work-dir', work]
    if resume:
        args += ['--resume', resume]
    rc, log = bench.run(args + bench.options(data=root, epochs=epochs) + [
        f'model.head.label_bank.score_file={score_file}', *extra])
    return work, rc, log


def teacher_refusal(rc, log, expect, *advice):
    """(the refusal's message, the result) of a run that must stop before
    training with ``expect`` and every ``advice`` in its message."""
    line = error_line(log, expect)
    ok = line and TRAIN_LINE not in log and all(a in line for a in advice)
    message = line.split('Error: ', 1)[-1]
    return message, judged(TRAIN_LINE not in log,
                           refusal(rc, line) if ok else 'crash',
                           'silent wrong answer')


def regenerated_teacher_data(bench):
    root = osp.join(bench.tmp, 'regenerated')
    shutil.copytree(bench.data, root)
    score_file = osp.join(root, 'teacher_scores', 'synthetic.npz')
    teacher_file(bench, score_file, root)
    _, make_log = bench.run([
        'tools/make_demo_data.py', '--out-dir', root, '--num-train', '160',
        '--num-test', '80', '--seed', '7'
    ])
    named = 'training refuses it' in make_log
    _, rc, log = teacher_train(bench, 'regenerated', score_file, root=root)
    message, result = teacher_refusal(rc, log, 'scored other image files',
                                      'Score them again with python -m '
                                      'tools.benchmark.teacher_quality')
    return ('the demo regenerated in place (make_demo_data.py --seed 7), '
            'its VLPL score file kept',
            f'make_demo_data.py {"named" if named else "did NOT name"} the '
            f'file; training refused: "{message.split(" from the ones")[0]}'
            '", with the command that writes it again',
            result if named else 'crash')


def teacher_resume(bench):
    """A VLPL run resumed with another teacher's file: refused, then
    resumed with resume_scores=file."""
    files = [osp.join(bench.tmp, 'teachers', f'{k}.npz') for k in 'ab']
    state = {}

    def refused():
        teacher_file(bench, files[0])
        state['b'] = teacher_file(bench, files[1], noise=0.6, seed=1)
        work, _, _ = teacher_train(bench, 'resume_a', files[0])
        state['checkpoint'] = osp.join(work, 'epoch_1.pth')
        _, rc, log = teacher_train(bench, 'resume_b', files[1], epochs=2,
                                   resume=state['checkpoint'])
        message, result = teacher_refusal(
            rc, log, 'differ from those of', 'resume_scores=checkpoint',
            f'score_file={files[0]}')
        return ('--resume a VLPL checkpoint with another teacher score '
                'file', 'refused before training: the checkpoint\'s scores '
                '(from a.npz) differ from b.npz\'s; names score_file=a.npz '
                'and default_hooks.teacher_scores.resume_scores=checkpoint '
                'or =file' if result == 'clear error' else
                f'{message[:130]}', result)

    def chosen():
        work, rc, log = teacher_train(
            bench, 'resume_file', files[1],
            'default_hooks.teacher_scores.resume_scores=file', epochs=2,
            resume=state['checkpoint'])
        ok = rc == 0 and f'training on the teacher scores of {files[1]}' \
            in log
        if ok:
            bank = load_checkpoint_safely(osp.join(work, 'epoch_2.pth'))[
                'state_dict']['head.label_bank.teacher_score']
            ok = np.array_equal(bank.numpy(), state['b'])
        return ('the same with default_hooks.teacher_scores.resume_scores='
                'file', 'trained epoch 2 on the new file\'s scores; the log '
                'names the file' if ok else
                f'FAILED ({error_line(log, "Error")[:70]})',
                judged(ok, 'right result', 'silent wrong answer'))

    yield refused
    yield chosen


def teacher_subset(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'whole.npz')
    teacher_file(bench, score_file)
    _, rc, log = teacher_train(bench, 'subset', score_file,
                               'train_dataloader.dataset.indices=64')
    ok = rc == 0 and 'Teacher scores of 64 training images' in log
    return ('a teacher file of the whole training set, training on '
            'train_dataloader.dataset.indices=64',
            'trained on the 64 images\' rows' if ok else
            f'FAILED ({error_line(log, "Error")[:90]})',
            judged(ok, 'right result', 'crash'))


def teacher_without_crops(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'no_crops.npz')
    teacher_file(bench, score_file)
    _, rc, log = teacher_train(bench, 'no_crops', score_file, base=AEVLP)
    message, result = teacher_refusal(
        rc, log, 'holds no crop scores',
        'python -m tools.benchmark.teacher_quality --write-teacher',
        '--crops 4')
    return ('AEVLP on a synthetic teacher file without crop scores',
            'refused: "no_crops.npz holds no crop scores", naming python -m '
            'tools.benchmark.teacher_quality --write-teacher ... --crops 4'
            if result == 'clear error' else message[:130], result)


def teacher_without_fingerprints(bench):
    from spml_mm.datasets.teacher_scores import read_teacher_scores
    score_file = osp.join(bench.tmp, 'teachers', 'old.npz')
    teacher_file(bench, score_file)
    table = read_teacher_scores(score_file)
    np.savez(score_file, scores=table['scores'],
             img_paths=np.array(table['img_paths']),
             classes=np.array(table['classes']),
             meta=np.array(json.dumps(table['meta'])))
    _, rc, log = teacher_train(bench, 'old_file', score_file)
    message, result = teacher_refusal(
        rc, log, 'records no image fingerprints', '--write-teacher',
        '--source file --scores')
    return ('a teacher score file without image fingerprints (an earlier '
            'version\'s)', 'refused: "old.npz records no image fingerprints '
            '..."; names the command that scores again and the one that '
            'binds the file to the images (--source file --scores old.npz '
            '--overwrite)' if result == 'clear error' else message[:130],
            result)


def teacher_text_npz(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'text.npz')
    os.makedirs(osp.dirname(score_file), exist_ok=True)
    with open(score_file, 'w') as f:
        f.write('image,0,1\nimages/train/train_00000.png,0.1,0.9\n')
    _, rc, log = teacher_train(bench, 'text_npz', score_file)
    message, result = teacher_refusal(rc, log, 'is not an .npz file')
    ok = 'pickled' not in message
    return ('a text file as the teacher score file (.npz)',
            f'refused: {message.split("; ")[0]}', result if ok else 'crash')


def teacher_check_dataset(bench):
    """tools/check_dataset.py of the VLPL demo config whose score file is
    missing, or written for other classes."""
    missing = osp.join(bench.tmp, 'teachers', 'missing.npz')
    other = osp.join(bench.tmp, 'teachers', 'other_classes.npz')

    def check(score_file, expect, case):
        rc, log = bench.run(['tools/check_dataset.py',
                             bench.config(base=VLPL)] + bench.options() +
                            [f'model.head.label_bank.score_file={score_file}'])
        line = error_line(log, expect)
        ok = line.startswith('teacher scores (model.head.label_bank.'
                             'score_file): ') and '1 problem(s)' in log
        problem = line.split('): ', 1)[-1].replace(bench.tmp + '/', '')
        problem = problem.split('; write it')[0].split(': 10 classes')[0]
        return (f'tools/check_dataset.py, VLPL demo config: {case}',
                f'1 problem: "{problem}", with the command that writes it'
                if ok else f'{error_line(log, "problem(s)")}',
                judged(ok, refusal(rc, line), 'silent wrong answer'))

    def other_classes():
        from spml_mm.datasets.teacher_scores import (read_teacher_scores,
                                                     save_teacher_scores)
        teacher_file(bench, other)
        table = read_teacher_scores(other)
        save_teacher_scores(other, table['scores'], table['img_paths'],
                            [f'class {c}' for c in table['classes']],
                            table['meta'],
                            img_fingerprints=table['img_fingerprints'])
        return check(other, 'another class list',
                     'the teacher file names other classes')

    yield lambda: check(missing, 'not found',
                        'the teacher score file is missing')
    yield other_classes


def documented_clip_command(bench):
    checkpoint = osp.join(bench.tmp, 'teachers', 'clip.pth')
    os.makedirs(osp.dirname(checkpoint), exist_ok=True)
    with open(checkpoint, 'wb') as f:
        f.write(b'weights')
    rc, log = bench.run([
        'tools/score_teacher.py', VLPL, '--source', 'clip', '--checkpoint',
        checkpoint, '--out', osp.join(bench.tmp, 'teachers', 'clip.npz'),
        '--cfg-options', f'train_dataloader.dataset.data_root={bench.data}'
    ], env=dict(HF_HUB_OFFLINE='1', HF_HOME=osp.join(bench.tmp, 'hf')))
    line = error_line(log, 'error: ')
    if 'model.tokenizer.name_or_path=FOLDER' in line:
        outcome = ('the zoo config read; refused before the model is built: '
                   'the tokenizer is not in the cache and HF_HUB_OFFLINE is '
                   'set, naming --teacher-options '
                   'model.tokenizer.name_or_path=FOLDER')
    elif 'transformers>=4.28,<4.52' in line:
        outcome = ('the zoo config read; refused: CLIPZeroShot needs pip '
                   "install 'transformers>=4.28,<4.52' 'huggingface_hub<1' "
                   'pycocotools (not installed here)')
    else:
        outcome = line[:130]
    return ('tools/score_teacher.py --source clip --checkpoint CKPT (the '
            'default zoo config), offline', outcome,
            judged(outcome != line[:130], refusal(rc, line), 'crash'))


def teacher(bench):
    yield lambda: regenerated_teacher_data(bench)
    yield from teacher_resume(bench)
    yield lambda: teacher_subset(bench)
    yield lambda: teacher_without_crops(bench)
    yield lambda: teacher_without_fingerprints(bench)
    yield lambda: teacher_text_npz(bench)
    yield from teacher_check_dataset(bench)
    yield lambda: documented_clip_command(bench)


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


def write_page(path, rows, groups):
    rerun = ('' if set(groups) == set(GROUPS) else
             f' This page\'s last run re-ran the groups {", ".join(groups)} '
             '(`--only`); the other rows are from earlier runs.')
    with open(path, 'w') as f:
        f.write('`python -m tools.benchmark.faults --out '
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--out',
        help='write the markdown table here; docs/results/faults.md also '
        'regenerates docs/RESULTS.md')
    parser.add_argument(
        '--only', nargs='+', choices=GROUPS, default=list(GROUPS),
        help='run these groups of scenarios only')
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(tmp)
        for k, scenario in enumerate(scenarios(bench, args.only)):
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
    print(summary(rows))
    if args.out:
        ran = {row[0] for row in rows}
        kept = [row for row in page_rows(args.out) if row[0] not in ran]
        if set(args.only) == set(GROUPS):
            kept = []
        write_page(args.out, kept + rows, args.only)
        docs = osp.join(REPO, 'docs')
        if osp.abspath(args.out) == osp.join(docs, 'results', 'faults.md'):
            print('wrote', render_results_page(docs))
    return 1 if any(row[2] not in PROMISED for row in rows) else 0


if __name__ == '__main__':
    sys.exit(main())
