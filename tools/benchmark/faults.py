"""Inject faults into demo runs and print one line per fault with the outcome.

    python tools/benchmark/faults.py [--out docs/results/faults.md]

Kills (SIGKILL) and I/O errors (ENOSPC) halfway through writing each kind of
checkpoint file, resuming into or from other work dirs, non-finite losses,
gradients and hyperparameters, a hung rank, and bad data: each scenario runs
``tools/train.py`` (or ``tools/check_dataset.py``) on a 160-image demo
dataset in a temporary folder and checks what the plugin promises (the last
good checkpoint resumes, the error names the culprit). ``--out`` writes the
table for docs/RESULTS.md.
"""
import argparse
import json
import os
import os.path as osp
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path.insert(0, REPO)
sys.path.insert(0, osp.dirname(osp.abspath(__file__)))

from results_page import machine_summary, render_results_page  # noqa: E402

from spml_mm.datasets import make_demo_dataset, split_train_val  # noqa: E402
from spml_mm.utils import (find_last_checkpoint,  # noqa: E402
                           load_checkpoint_safely)

CONFIG = 'configs/an/an_vgg11bn_demo.py'

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

    def config(self, extra='[]', more=''):
        self.count += 1
        path = osp.join(self.tmp, f'config{self.count}.py')
        with open(path, 'w') as f:
            f.write(FAULT_CONFIG.format(repo=REPO, config=CONFIG, extra=extra,
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
        f'{how}; {text}', ok and rc != 0


def scenarios(bench: Bench):
    # epoch 2 writes: #7 epoch_2.pth, #8 last_checkpoint, #9 the new best,
    # #10 epoch_2.pth again, #11 last_checkpoint, #12 last_validated
    for fault in ('kill_in_write', 'enospc_in_write'):
        for at, what in ((7, 'epoch_2.pth'), (8, 'last_checkpoint'),
                         (9, 'the new best checkpoint')):
            yield lambda f=fault, a=at, w=what: write_fault(bench, f, a, w)
    yield lambda: resume_from_other_run(bench)
    yield lambda: moved_work_dir(bench)
    yield lambda: weights_only_resume(bench)
    yield lambda: nan_loss(bench)
    yield lambda: inf_gradient(bench)
    yield lambda: inf_learning_rate(bench)
    yield lambda: nan_hyperparameter(bench)
    yield lambda: hung_rank(bench)
    yield from bad_data(bench)


def resume_from_other_run(bench):
    first, second = (osp.join(bench.tmp, n) for n in ('first', 'second'))
    bench.train(first, epochs=1)
    before = sorted(os.listdir(first))
    rc, _ = bench.train(second, '--resume', osp.join(first, 'epoch_1.pth'))
    after = sorted(os.listdir(first))
    ok = rc == 0 and before == after
    return ('--resume PATH into another run\'s work dir',
            f'trained to epoch 2; the other run\'s files '
            f'{"untouched" if before == after else "CHANGED"}', ok)


def moved_work_dir(bench):
    work = osp.join(bench.tmp, 'moved_src')
    bench.train(work, epochs=1)
    moved = osp.join(bench.tmp, 'moved_dst')
    shutil.move(work, moved)
    rc, log = bench.train(moved, '--resume')
    ok = rc == 0 and 'resumed epoch: 1' in log
    return ('work dir moved, then --resume',
            'resumed epoch 1 from the moved folder' if ok else 'FAILED', ok)


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
             ('trained on' if rc2 == 0 else 'FAILED')), refused and rc2 == 0)


def stopped_with(bench, name, args, expect, config=None, epochs=1):
    rc, log = bench.train(osp.join(bench.tmp, name), *args, config=config,
                          epochs=epochs)
    line = error_line(log, expect)
    saved = [f for f in os.listdir(osp.join(bench.tmp, name))
             if f.endswith('.pth')] if osp.isdir(osp.join(bench.tmp,
                                                          name)) else []
    return line, rc != 0 and bool(line), saved


def nan_loss(bench):
    line, ok, saved = stopped_with(
        bench, 'nan', ['--cfg-options', 'optim_wrapper.optimizer.lr=1e30'],
        'DivergenceError: ')
    return ('learning rate 1e30 (loss becomes NaN)',
            f'stopped: {line[:90]}...; checkpoints saved: {len(saved)}', ok
            and not saved)


def inf_gradient(bench):
    line, ok, saved = stopped_with(
        bench, 'infgrad', [], 'DivergenceError: ',
        config=bench.config(extra="[dict(type='InfGradHook', at=2)]"))
    return ('infinite gradient at iteration 2 (finite loss)',
            f'stopped: {line[:90]}...', ok and 'gradient norm' in line)


def inf_learning_rate(bench):
    line, ok, _ = stopped_with(
        bench, 'inflr', ['--cfg-options', 'optim_wrapper.optimizer.lr=inf'],
        'ValueError: ')
    return ('optim_wrapper.optimizer.lr=inf', f'refused: {line[:90]}', ok)


def nan_hyperparameter(bench):
    config = bench.config(more="model = dict(head=dict(loss=dict("
                          "_delete_=True, type='EMLoss', alpha=float('nan'), "
                          "beta=0.1)))")
    line, ok, _ = stopped_with(bench, 'nanalpha', [], 'alpha must be',
                               config=config)
    return ('EMLoss alpha=nan', f'refused: {line[:90]}', ok)


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
    ok = proc.returncode != 0 and bool(line)
    return ('rank 1 of 2 hangs, env_cfg.dist_cfg.timeout=3',
            f'job ended after {time.time() - start:.0f} s: '
            f'{line.split("DistributedTimeoutError: ")[-1][:80]}...', ok)


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
                if ln else 'NOT REPORTED'), bool(ln) and rc == 1)
    path = osp.join(bench.tmp, 'bad.json')
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=['a']),
                       data_list=[dict(img_path='a.jpg', gt_label=[0]), 7]),
                  f)
    from spml_mm.datasets import load_multilabel_annotations
    try:
        load_multilabel_annotations(path)
        message, ok = 'accepted', False
    except ValueError as err:
        message, ok = str(err).splitlines()[-1].strip(), True
    except TypeError as err:
        message, ok = f'TypeError: {err}', False
    yield lambda: ('JSON data_list entry that is an int',
                   f'refused: {message.replace(bench.tmp, "")[:80]}', ok)
    line, ok, _ = stopped_with(bench, 'heads', ['--cfg-options',
                                                'model.head.num_classes=7'],
                               'ValueError: model.head.num_classes=7')
    yield lambda: ('head num_classes=7, dataset 10 classes',
                   f'refused: {line[:90]}', ok)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--out',
        help='write the markdown table here; docs/results/faults.md also '
        'regenerates docs/RESULTS.md')
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(tmp)
        for k, scenario in enumerate(scenarios(bench)):
            try:
                fault, outcome, ok = scenario()
            except Exception as err:  # a broken scenario is reported too
                fault, outcome, ok = (f'scenario {k}',
                                      f'{type(err).__name__}: {err}', False)
            outcome = outcome.replace(tmp + '/', '').replace('|', '/')
            rows.append((fault, outcome, ok))
            print(f'{"ok  " if ok else "FAIL"} {fault}: {outcome}',
                  flush=True)
    failed = sum(not ok for _, _, ok in rows)
    print(f'{len(rows) - failed}/{len(rows)} faults handled as promised')
    if args.out:
        with open(args.out, 'w') as f:
            f.write('`python tools/benchmark/faults.py --out '
                    'docs/results/faults.md`: each fault injected into a '
                    'run of `configs/an/an_vgg11bn_demo.py` on a 160-image '
                    f'demo dataset (2 epochs), on {machine_summary()}.\n\n'
                    '| fault | outcome | as promised |\n| --- | --- | --- |\n')
            for fault, outcome, ok in rows:
                f.write(f'| {fault} | {outcome} | {"yes" if ok else "NO"} '
                        '|\n')
        docs = osp.join(REPO, 'docs')
        if osp.abspath(args.out) == osp.join(docs, 'results', 'faults.md'):
            print('wrote', render_results_page(docs))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
