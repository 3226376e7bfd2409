"""Misuse (group ``misuse``): checkpoints that do not fit, shared or reused
work dirs, a kill during the last validation, damaged files, impossible
settings."""
import json
import os
import os.path as osp
import re
import socket
import subprocess
import sys
import time

import numpy as np

from benchmark.faults.harness import (CONFIG, bad_file, copied_run, each,
                                      error_line, judged, recovered,
                                      refusal, snapshot, stopped_with,
                                      trained_run, users_file)
from benchmark.common import REPO


def test_run(bench, checkpoint, *options):
    return bench.run(['tools/test.py', bench.config(), checkpoint] +
                     bench.options() + list(options))


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
    return users_file(bench, 'own_files', 'weights.pth.partial',
                      'a download in progress',
                      'a file of the user named *.partial in the work dir')


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


def scenarios(bench):
    yield from each(bench, other_architecture, other_method, concurrent_runs,
                    reused_work_dir, stale_lock, foreign_partial,
                    kill_in_last_validation)
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
