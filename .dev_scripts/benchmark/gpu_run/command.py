"""The GPU command's arguments, and its parts run in order of priority,
each within the budget left (``bash tools/gpu_run.sh``)."""
import argparse
import json
import os.path as osp
import sys
import time

from benchmark import gpu_run
from benchmark.gpu_run import (evidence, harness, inputs, machine,
                               profiling, speed, tier)
from benchmark.gpu_run.evidence_queue import (METHODS, SEEDS,
                                              TEACHER_METHODS)
from benchmark.common import REPO

#: the parts, in order of priority
PARTS = dict(tier=lambda run, procs: tier.part_tier(run),
             speed=speed.part_speed, profile=profiling.part_profile,
             compile=profiling.part_compile, evidence=evidence.part_evidence)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog='bash tools/gpu_run.sh',
        description=gpu_run.__doc__.split('\n')[0])
    parser.add_argument('--out', required=True,
                        help='the folder that comes back from the machine: '
                        f'manifest.json and {machine.PACK}, the whole '
                        'output')
    parser.add_argument('--stage', default='work_dirs/gpu_run/out',
                        help='where the output is written before it is '
                        'packed: a new or empty folder, or an earlier '
                        'command\'s stage (emptied first), apart from --out')
    parser.add_argument('--budget', type=float, default=machine.BUDGET,
                        help='seconds from the start of tools/gpu_run.sh '
                        'after which no part starts and the running ones '
                        f'end (default {machine.BUDGET}: a 600 s limit less '
                        'a minute)')
    parser.add_argument('--device', default='cuda')
    parser.add_argument('--tiny', action='store_true',
                        help='rehearsal: tiny data and runs on --device cpu')
    parser.add_argument('--parts', nargs='+', default=list(PARTS),
                        choices=list(PARTS))
    parser.add_argument('--results-dir',
                        default=osp.join(REPO, 'docs', 'results'),
                        help='the committed results: parts and runs found '
                        'there for the same kind of run are skipped')
    parser.add_argument('--jobs', type=int, default=machine.JOBS,
                        help='evidence runs side by side (default '
                        f'{machine.JOBS}: each is bound by the host core '
                        'launching its kernels, so 16 cores and one GPU take '
                        "about ten; the manifest's samples of GPU use and "
                        'load say whether more fit)')
    parser.add_argument('--methods', nargs='+',
                        default=list(METHODS + TEACHER_METHODS),
                        choices=METHODS + TEACHER_METHODS)
    parser.add_argument('--eval-batch', type=int, default=256,
                        help='validation and test batch of the evidence '
                        'runs')
    parser.add_argument('--evidence-mode', default='auto',
                        choices=['auto', 'eager', *profiling.COMPILED],
                        help='how the evidence runs train (default auto: '
                        'the compiled mode of the profile that projects a '
                        f'run at most {evidence.SWITCH} of an eager one, else '
                        'eager)')
    parser.add_argument('--run-estimate', type=float, default=240,
                        help='seconds a run takes before one has finished '
                        '(a run starts only if it fits the budget left)')
    parser.add_argument('--gpu-tests', nargs='+', default=['tests'])
    parser.add_argument('--work', default='work_dirs/gpu_run',
                        help='work dirs of the runs (not returned)')
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    # the parts write into the stage, packed into --out
    args.back, args.out = osp.abspath(args.out), osp.abspath(args.stage)
    problem = harness.folder_problem(args.out, args.back)
    if problem:
        parser.error(problem)
    args.tiny_fraction = 0.01
    args.tiny_options = []
    args.seeds = SEEDS
    if args.tiny:
        args.seeds = SEEDS[:1]
        if '--run-estimate' not in args.argv:
            args.run_estimate = 0
        # two iterations an epoch, one epoch; the runs' own structure kept
        args.tiny_options = ['train_cfg.max_epochs=1',
                             'train_dataloader.dataset.indices=16']
        args.methods = args.methods if '--methods' in args.argv else ['an']
    if args.device.startswith('cuda'):
        import torch
        if not torch.cuda.is_available():
            parser.error(f'--device {args.device}: no CUDA GPU here; '
                         'rehearse with --device cpu --tiny')
    return args


def main(argv=None):
    args = parse_args(argv)
    run = harness.Run(args)
    procs = inputs.start_data(run) if {'speed', 'profile', 'evidence'} & set(
        args.parts) else {}
    try:
        for name in args.parts:
            if run.left() < 10:
                run.part(name, status='skipped: budget spent')
                continue
            started = time.time()
            try:
                PARTS[name](run, procs)
            except Exception as err:  # the next part still runs
                run.part(name, status=f'error: {type(err).__name__}: {err}')
            run.part(name, seconds=round(time.time() - started, 1))
    finally:
        for proc in procs.values():
            if proc is not None:
                harness.stop(proc)
        run.manifest['finished'] = time.strftime('%Y-%m-%d %H:%M:%S UTC',
                                                 time.gmtime())
        run.save()
    print(json.dumps(run.manifest['parts'], indent=1))
    return run.manifest
