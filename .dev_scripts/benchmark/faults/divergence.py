"""Non-finite losses, gradients and hyperparameters, and a hung rank (group
``divergence``)."""
import os
import os.path as osp
import socket
import subprocess
import sys
import time

from benchmark.faults.harness import (each, error_line, judged, refusal,
                                      stopped_with)
from benchmark.common import REPO


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


def scenarios(bench):
    yield from each(bench, nan_loss, inf_gradient, inf_learning_rate,
                    nan_hyperparameter, hung_rank)
