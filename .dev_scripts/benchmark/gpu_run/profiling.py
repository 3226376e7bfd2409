"""The ``profile`` and ``compile`` parts: fine-tuned proxy runs split into
data wait and step, with their operators (``profile_train.py``), into
``gpu_profile.json``; ``compile`` the image cache's run again with the
train step compiled."""
import os
import os.path as osp
import sys
import time
from typing import Dict, List

from benchmark.gpu_run import harness, inputs
from benchmark.common import load_json, write_json

LASD_CONFIG = 'configs/lasd/efficientnet-lite0_proxy-voc.py'
#: the profile's runs of the ``compile`` part, each the image cache's run
#: with MMEngine's ``compile`` of the train step: the eager kernels in CUDA
#: graphs, inductor's, and inductor's in CUDA graphs
COMPILED = {
    'image cache, CUDA graphs': ['compile.backend=cudagraphs'],
    'image cache, compiled': ['compile=True'],
    'image cache, compiled, CUDA graphs': ['compile.mode=reduce-overhead'],
}
#: seconds left in a part for its next run to start: the rest waits for the
#: next command (on an H200 a compiled run had reached 50 of its 150
#: iterations after 34 s; three of them given a third each of 167 s all
#: timed out)
RUN_NEED = dict(profile=40, compile=150)


def profile_runs(args) -> Dict[str, tuple]:
    """Profiled run -> its config and --cfg-options (the evidence's
    settings); LASD's gives its runs' cost against AN's
    (``evidence.costs``)."""
    base = inputs.data_root_options(args) + [
        'train_dataloader.num_workers=1', 'randomness.seed=0']
    cached = base + inputs.fast_options(args)
    config = inputs.PROXY_CONFIG
    return {'decoding files': (config, base),
            'image cache': (config, cached),
            'LASD, image cache': (LASD_CONFIG, cached),
            **{label: (config, cached + compiled(args, label))
               for label in COMPILED}}


def compiled(args, label: str) -> List[str]:
    """The --cfg-options of compiled mode ``label`` (--tiny: the compile
    path on the CPU with dynamo's eager backend, without inductor's
    build)."""
    return ['compile.backend=eager'] if args.tiny else COMPILED[label]


def profiled(run: harness.Run) -> List[dict]:
    """The profile's runs: this command's ``gpu_profile.json`` (which holds
    the committed runs too), else the committed one."""
    found = load_json(osp.join(run.args.out, 'gpu_profile.json'))
    return found.get('runs') or (run.committed('gpu_profile.json') or
                                 {}).get('runs', [])


def part_profile(run: harness.Run, procs: dict) -> None:
    """The eager runs of the profile."""
    profile(run, procs, 'profile',
            [label for label in profile_runs(run.args)
             if label not in COMPILED])


def part_compile(run: harness.Run, procs: dict) -> None:
    """The compiled runs of the profile."""
    profile(run, procs, 'compile', COMPILED)


def profile(run: harness.Run, procs: dict, part: str,
            labels: List[str]) -> None:
    """The profile runs ``labels`` not yet in the results, added to
    ``gpu_profile.json``."""
    args = run.args
    found = profiled(run)
    todo = {label: spec for label, spec in profile_runs(args).items()
            if label in labels and label not in {r['label'] for r in found}}
    if not todo:
        return run.part(part, status='skipped: committed')
    need = 0 if args.tiny else RUN_NEED[part]
    if run.left() < need:
        return run.part(part, status=f'skipped: under {need} s left')
    if not inputs.evidence_ready(run, procs):
        return run.part(part, status='no data')
    folder = osp.join(args.out, 'profile')
    os.makedirs(folder, exist_ok=True)
    results, statuses = list(found), []
    iters = ['--iters', '4', '--skip', '1', '--active', '1'] if args.tiny \
        else ['--iters', '150', '--skip', '30', '--active', '10']
    deadline = time.time() + run.cap(part)
    for label, (config, options) in todo.items():
        # one run at a time with all the part's time left, not a share of
        # it: a run that cannot finish measures nothing
        cap = deadline - time.time()
        if cap < need:
            statuses.append(f'{label}: left for the next command')
            continue
        out = osp.join(folder, label.replace(' ', '_').replace(',', ''))
        statuses.append(harness.call(
            [sys.executable, '-m', 'benchmark.profile_train',
             config, '--out', out, '--label', label, *iters,
             '--cfg-options', *options], osp.join(folder, 'profile.log'),
            cap, env=dict(OMP_NUM_THREADS='2')))
        if osp.isfile(osp.join(out, 'profile.json')):
            results.append(load_json(osp.join(out, 'profile.json')))
    if len(results) > len(found):
        write_json(osp.join(args.out, 'gpu_profile.json'),
                   dict(kind=run.kind(),
                        environment=run.manifest['environment'],
                        runs=results))
    run.part(part, status=', '.join(statuses), runs=len(results))
