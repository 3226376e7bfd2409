"""The ``speed`` part: ``.dev_scripts/benchmark/speed_gpu.py``'s tables
(``gpu.json``), continuing a committed incomplete table on the same
device."""
import os
import os.path as osp
import shutil
import sys

from benchmark.gpu_run import harness, inputs
from benchmark.common import code_fingerprint, load_json, write_json


def part_speed(run: harness.Run, procs: dict) -> None:
    """speed_gpu.py within the part's cap, once the data is written."""
    args = run.args
    found = run.committed('gpu.json')
    if found and found.get('complete'):
        return run.part('speed', status='skipped: committed, complete')
    # a quiet host: the step is host-bound, and the data writing beside it
    # on every core made the H100's first fp32 rows 4x slower
    for root in procs:
        inputs.wait_data(run, procs, root)
    folder = osp.join(args.out, 'speed')
    os.makedirs(folder, exist_ok=True)
    cap = run.cap('speed')
    cmd = [sys.executable, '-m', 'benchmark.speed_gpu', '--device',
           args.device, '--out', folder, '--budget', f'{cap - 30:.0f}',
           '--warmup', '3', '--iters', '10', '--rounds', '3',
           '--recipe-methods', 'stock', '--no-compile']
    if args.tiny:
        cmd += ['--tiny', '--methods', 'AN', '--precisions', 'fp32',
                '--switches', 'batched_copy', '--workers', '1', '--warmup',
                '1', '--iters', '1', '--rounds', '1', '--batch-size', '4',
                '--img-size', '32']
    elif found and found.get('tables_complete', {}).get('recipe') and \
            continued(found, args):
        cmd += ['--tables', 'heads']
    elif inputs.ready('data/proxy-voc-448'):
        cmd += ['--data-root', 'data/proxy-voc-448']
    else:
        cmd += ['--tables', 'heads']
    if found:  # committed, incomplete: continued if of this device
        shutil.copy(osp.join(args.results_dir, 'gpu.json'),
                    osp.join(folder, 'previous.json'))
        cmd += ['--resume', osp.join(folder, 'previous.json')]
    status = harness.call(cmd, osp.join(folder, 'speed_gpu.log'), cap)
    path = osp.join(folder, 'gpu.json')
    if osp.isfile(path):
        record = load_json(path)
        record.update(kind=run.kind(),
                      run_environment=run.manifest['environment'])
        write_json(path, record)
    run.part('speed', status=status,
             complete=osp.isfile(path) and record['complete'])


def continued(found: dict, args) -> bool:
    """Whether ``speed_gpu.py --resume`` keeps the rows of ``found``: the
    same code, machine and versions (else it measures every table)."""
    from types import SimpleNamespace

    from benchmark.gpu_steps import environment
    return (found.get('code'), found.get('environment')) == (
        code_fingerprint(),
        environment(SimpleNamespace(device=args.device)))
