"""Writes killed or failing halfway (group ``writes``): a SIGKILL or an
ENOSPC halfway through each kind of checkpoint file, and a kill before the
previous best checkpoint's removal; each then resumed."""
import os.path as osp

from spml_mm.utils import find_last_checkpoint, load_checkpoint_safely
from benchmark.faults.harness import (Bench, best_files, error_line,
                                      judged)


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


def scenarios(bench):
    # epoch 2 writes: #6 epoch_2.pth, #7 last_checkpoint, #8 the new
    # best, #9 epoch_2.pth again, #10 last_checkpoint
    for fault in ('kill_in_write', 'enospc_in_write'):
        for at, what in ((6, 'epoch_2.pth'), (7, 'last_checkpoint'),
                         (8, 'the new best checkpoint')):
            yield lambda f=fault, a=at, w=what: write_fault(
                bench, f, a, w)
    yield lambda: kill_before_best_removal(bench)
