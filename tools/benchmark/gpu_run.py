"""Everything a GPU machine measures for this project, in one budgeted,
resumable command (``bash tools/gpu_run.sh``, which installs the wheels of
``.whl/`` first where the OpenMMLab stack is missing; ``bash
tools/pack_wheels.sh`` fills it).

Parts, in order of priority, each capped by the budget left and skipped when
its result is already in ``--results-dir`` (default ``docs/results``, the
committed results) for the same kind of run (device, ``--tiny``):

1. ``tier``: the GPU tier, ``pytest -m gpu`` (junit xml kept; pass/fail per
   test in ``gpu_tier.json``);
2. ``speed``: ``tools/benchmark/speed_gpu.py`` (``gpu.json``), continuing a
   committed incomplete table on the same device;
3. ``profile``: one fine-tuned proxy run split into data wait and step, with
   the operators (``tools/benchmark/profile_train.py``), decoding files and
   from the image cache, and LASD's from the image cache, whose iteration
   against AN's is its runs' cost in the evidence's budget
   (``gpu_profile.json``; runs already committed are kept);
4. ``compile``: the profile's image-cache run again with the train step
   compiled (MMEngine's ``compile``): its kernels captured into CUDA graphs
   (``backend='cudagraphs'``), inductor's (``compile=True``), and inductor's
   in CUDA graphs (``mode='reduce-overhead'``), in ``gpu_profile.json``:
   whether the host-bound step gets cheaper, and at what start-up cost;
   when at least ``COMPILE_NEED`` seconds are left;
5. ``evidence``: the full-size fine-tuned VOC-like queue
   (``tools/benchmark/accuracy.py --suite proxy-voc --regime finetune``):
   each method's rate search (a grid rate that the other methods' searches
   found more than :data:`FAR` points below their best left out; a step
   past the grid's edge where the best is there), then 3 seeds at its rate
   (seed 0: the search's run); after the papers' methods the model teacher
   (``tools/benchmark/teacher_quality.py --model-teacher``) and VLPL and
   AEVLP on its scores, where they have a fine-tuned config; up to
   ``--jobs`` runs side by side, each started only
   when it fits in the budget left (a run the budget stopped resumes),
   from the image cache and, where the profile projects a run at most
   ``SWITCH`` of an eager one, in the fastest compiled mode
   (``--evidence-mode``; a compiled run that fails is run again eagerly);
   the results jsons, seeded with the committed ones, gain every finished
   run at once.

Everything is written into ``--stage`` and packed, after every part, into
``--out`` as ``gpu_run.tar.gz`` beside ``manifest.json`` (device, versions,
what each part did): the device tool returns at most 8 files of ``$OUT``.
The stage is emptied first, so it must be new, empty or an earlier
command's (marked by :data:`STAGE_MARK`), and apart from ``--out``; an
``--out`` holding a ``manifest.json`` or pack of something else is refused
too.
``python -m tools.benchmark.gpu_collect OUT`` copies the results into
``docs/results`` and writes the pages again. ``--device cpu --tiny`` rehearses every part in
seconds (tiny data and runs; the GPU tier's tests are collected and skip).

Example:
    bash tools/gpu_run.sh --budget 540 --out $OUT
    bash tools/gpu_run.sh --device cpu --tiny --out /tmp/rehearsal
"""
import argparse
import glob
import io
import json
import math
import os
import os.path as osp
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Tuple

from tools.common import REPO, code_fingerprint, write_json
from tools.common import load_json as load
PARTS = ('tier', 'speed', 'profile', 'compile', 'evidence')
#: the most seconds each part may take (of the budget left)
#: (on an H100, 150 s for the speed tables measured the heads' table and 2
#: of the recipe's 18 rows)
CAPS = dict(tier=240, speed=300, profile=90, compile=240)
#: the queue: the papers' methods in the order of the table, then those that
#: read the model teacher's scores; each one's rate grid
METHODS = ('an', 'full', 'gr', 'em', 'em_apl', 'lasd', 'opml', 'opml_sp')
TEACHER_METHODS = ('vlpl', 'aevlp')
ADAM_RATES = ('1e-05', '0.0001', '0.001')
SGD_RATES = ('0.0001', '0.001', '0.01')
SEEDS = (0, 1, 2)
#: a grid rate is far below when it is more than this many points of
#: validation mAP below its method's best: one that every other method of
#: the grid that ran it found so is left out of the searches that lack it
#: (1e-5 lost 30 points for AN and the full-label bound)
FAR = 10.
#: a search whose best is at an edge of its grid goes a step past it on the
#: 1-3-10 ladder (1e-3 -> 3e-3), at most this many steps beyond the grid
PAST_EDGE = 2
#: a run's cost against AN's where the profile has not measured it (LASD
#: trains on three views of each image: 5.4 times AN's time in the CPU's
#: fine-tuned table at a fifth of the size); the model teacher: writing its
#: proxy instance (a minute on one core), its training, and scoring 17
#: views of each training image (the whole image and 4 x 4 crops)
COST = dict(lasd=5., teacher=2.)
SUITE = 'proxy-voc'
PROXY_CONFIG = 'configs/an/efficientnet-lite0_proxy-voc.py'
LASD_CONFIG = 'configs/lasd/efficientnet-lite0_proxy-voc.py'
#: the profile's runs of the ``compile`` part, each the image cache's run
#: with MMEngine's ``compile`` of the train step: the eager kernels in CUDA
#: graphs, inductor's, and inductor's in CUDA graphs
COMPILED = {
    'image cache, CUDA graphs': ['compile.backend=cudagraphs'],
    'image cache, compiled': ['compile=True'],
    'image cache, compiled, CUDA graphs': ['compile.mode=reduce-overhead'],
}
#: a compiled mode trains the evidence when the profile projects its run at
#: most this share of an eager run's seconds
SWITCH = 0.8
#: seconds the compile part needs to start (inductor builds two of its runs)
COMPILE_NEED = 150
#: the packed output, in --out
PACK = 'gpu_run.tar.gz'
#: the file that marks a folder as a command's stage (emptied by the next)
STAGE_MARK = '.gpu_run_stage'


def grid(method: str, tiny: bool = False) -> Tuple[str, ...]:
    """A method's rate grid (``--tiny``: one rate)."""
    rates = SGD_RATES if method.startswith('opml') else ADAM_RATES
    return rates[-1:] if tiny else rates


def ladder_step(rate: str, up: bool) -> str:
    """The rate a step past ``rate`` on the 1-3-10 ladder (up: 1e-3 ->
    3e-3 -> 1e-2; down: 1e-5 -> 3e-6), keyed as accuracy.py keys rates."""
    x = float(rate)
    e = math.floor(math.log10(x) + 1e-9)
    ladder = [float(f'{c}e{k}') for k in (e - 1, e, e + 1) for c in (1, 3)]
    step = min(v for v in ladder if v > x * (1 + 1e-9)) if up else max(
        v for v in ladder if v < x * (1 - 1e-9))
    return f'{step:g}'


def far_below(rate: str, method: str, search: dict) -> bool:
    """Whether every other method of ``method``'s grid whose search ran
    ``rate`` found it more than :data:`FAR` points below its best, and one
    did."""
    found = [runs for m, runs in search.items()
             if m != method and rate in runs and grid(m) == grid(method)]
    return bool(found) and all(
        max(r['val_mAP'] for r in runs.values()) - runs[rate]['val_mAP'] >
        FAR for runs in found)


def search_todo(method: str, search: dict, tiny: bool = False) -> List[str]:
    """The rates ``method``'s search still needs: its grid's, less those
    far below (:func:`far_below`); once they are in, where its best is at
    an edge of the rates searched, the rate a step past it, up to
    :data:`PAST_EDGE` steps beyond the grid and not a rate far below.
    Nothing left: the search is complete (``--tiny``: its one rate is
    in)."""
    from tools.benchmark.pages.accuracy import grid_position
    runs, rates = search.get(method, {}), grid(method, tiny)
    todo = [r for r in rates
            if r not in runs and not far_below(r, method, search)]
    position = grid_position(runs) if runs else None
    if todo or tiny or position not in ('top edge', 'bottom edge'):
        return todo
    up = position == 'top edge'
    beyond = [r for r in runs if (float(r) > float(rates[-1]) if up else
                                  float(r) < float(rates[0]))]
    step = ladder_step(max(runs, key=lambda r: runs[r]['val_mAP']), up)
    if len(beyond) >= PAST_EDGE or far_below(step, method, search):
        return []
    return [step]


def evidence_queue(methods: List[str], search: dict, seeds: dict,
                   seed_list, tiny: bool, teacher: bool) -> List[tuple]:
    """The evidence runs ready to start, in order: the papers' methods'
    rate searches (:func:`search_todo`), then their seeds seed-major, each
    method's once its search is complete; then, for the teacher methods of
    ``methods``, the model teacher once the full-label bound's search is
    complete and until its score file exists (``teacher``), and the
    teacher methods' searches and seeds once it does."""

    def complete(method):
        return bool(search.get(method)) and not search_todo(
            method, search, tiny)

    readers = [m for m in methods if m in TEACHER_METHODS]
    groups = [[m for m in methods if m not in TEACHER_METHODS]] + (
        [readers] if teacher else [])
    tasks = []
    for group in groups:
        tasks += [('lr', m, lr) for m in group
                  for lr in search_todo(m, search, tiny)]
        tasks += [('seed', m, s) for s in seed_list for m in group
                  if str(s) not in seeds.get(m, {}) and complete(m)]
    if readers and not teacher and complete('full'):
        tasks.append(('teacher', 'full', 0))
    return tasks


class Run:
    """The command's state: budget, output folder and manifest."""

    def __init__(self, args):
        self.args = args
        self.start = float(os.environ.get('GPU_RUN_START', time.time()))
        self.deadline = self.start + args.budget
        if osp.isdir(args.out):  # an earlier command's (parse_args)
            shutil.rmtree(args.out)
        os.makedirs(args.out)
        with open(osp.join(args.out, STAGE_MARK), 'w') as f:
            f.write('the stage of tools/gpu_run.sh: its next command '
                    'empties this folder\n')
        os.makedirs(args.back, exist_ok=True)
        self.manifest = dict(
            command=' '.join(['bash tools/gpu_run.sh', *args.argv]),
            kind=self.kind(), environment=environment(args.device),
            started=time.strftime('%Y-%m-%d %H:%M:%S UTC',
                                  time.gmtime(self.start)),
            budget_s=args.budget, parts={})
        self.save()

    def kind(self) -> dict:
        """What a committed result must match to be skipped."""
        return dict(device='cuda' if self.args.device.startswith('cuda')
                    else 'cpu', tiny=self.args.tiny)

    def left(self) -> float:
        return self.deadline - time.time()

    def cap(self, name: str) -> float:
        """Seconds part ``name`` may take: its cap (``--tiny`` on a CPU:
        none) within the budget left."""
        return self.left() if self.args.tiny else min(CAPS[name],
                                                      self.left())

    def part(self, name: str, **fields) -> None:
        self.manifest['parts'].setdefault(name, {}).update(fields)
        self.save()

    def save(self) -> None:
        self.manifest['elapsed_s'] = round(time.time() - self.start, 1)
        write_json(osp.join(self.args.out, 'manifest.json'), self.manifest)
        pack(self.args.out, self.args.back)
        shutil.copy(osp.join(self.args.out, 'manifest.json'), self.args.back)

    def committed(self, name: str) -> Optional[dict]:
        """A result json of ``--results-dir`` made by the same kind of
        run."""
        path = osp.join(self.args.results_dir, name)
        if not osp.isfile(path):
            return None
        with open(path) as f:
            found = json.load(f)
        return found if found.get('kind') == self.kind() else None


def environment(device: str) -> dict:
    import torch
    cuda = device.startswith('cuda') and torch.cuda.is_available()
    versions = {}
    for module in ('mmengine', 'mmpretrain', 'mmcv', 'spml_mm', 'timm',
                   'torchvision', 'numpy'):
        try:
            versions[module] = __import__(module).__version__
        except ImportError:
            versions[module] = None
    return dict(
        device=torch.cuda.get_device_name() if cuda else 'CPU',
        gpu_memory_gib=round(torch.cuda.get_device_properties(0).total_memory
                             / 2**30, 1) if cuda else None,
        torch=torch.__version__, cuda=torch.version.cuda,
        cudnn=torch.backends.cudnn.version() if cuda else None,
        python=platform.python_version(), cpu_cores=os.cpu_count(),
        host=platform.node(), **versions)


def pack(stage: str, back: str) -> None:
    """``stage`` as ``back/gpu_run.tar.gz``, replaced whole (a command
    killed while packing still returns the previous pack). The runs write
    into ``stage`` meanwhile: each file is read once and added as read (a
    json renamed into place is whole; a page rewritten in place may be
    caught partway, and is whole in the next pack), a file gone since the
    listing is left out, and so are the ``.tmp`` files renamed over the
    jsons and the stage's mark."""
    path = osp.join(back, PACK)
    with tarfile.open(path + '.part', 'w:gz') as tar:
        for folder, subfolders, files in os.walk(stage):
            subfolders.sort()
            for name in sorted(f for f in files if not f.endswith('.tmp')
                               and f != STAGE_MARK):
                file = osp.join(folder, name)
                try:
                    with open(file, 'rb') as f:
                        data = f.read()
                except FileNotFoundError:
                    continue
                info = tarfile.TarInfo(osp.relpath(file, stage))
                info.size, info.mtime = len(data), time.time()
                tar.addfile(info, io.BytesIO(data))
    os.replace(path + '.part', path)


def folder_problem(stage: str, back: str) -> Optional[str]:
    """Why the command may not write into ``stage`` (emptied first) and
    ``back`` (``--out``), or None: the stage must be new, empty or marked by
    :data:`STAGE_MARK`, and neither folder inside the other; ``back`` must
    not hold a ``manifest.json`` or pack of something else."""
    stage, back = osp.realpath(stage), osp.realpath(back)
    if osp.commonpath([stage, back]) in (stage, back):
        return (f'--stage {stage} and --out {back} must be apart (neither '
                'inside the other): the stage is emptied, and --out gets '
                'its pack')
    if osp.exists(stage) and not osp.isdir(stage):
        return f'--stage {stage} is a file, not a folder'
    found = sorted(os.listdir(stage)) if osp.isdir(stage) else []
    if found and STAGE_MARK not in found:
        return (f'--stage {stage} holds files that tools/gpu_run.sh did not '
                f'write ({", ".join(found[:3])}' + ', ...' * (len(found) > 3)
                + f') and no {STAGE_MARK}; it empties its stage: give a new '
                'or empty folder')
    manifest = osp.join(back, 'manifest.json')
    try:
        ours = load(manifest).get('command', '').startswith(
            'bash tools/gpu_run.sh')
    except (ValueError, AttributeError):
        ours = False
    for name in ('manifest.json', PACK):
        if osp.exists(osp.join(back, name)) and not ours:
            return (f'--out {back} holds a {name} that is not a '
                    'tools/gpu_run.sh output; give another folder')
    return None


def launch(cmd: List[str], log: str, env: Optional[dict] = None):
    """Start ``cmd`` in the repository root in its own process group, its
    output to ``log``."""
    out = open(log, 'a')
    out.write(f'$ {" ".join(cmd)}\n')
    out.flush()
    return subprocess.Popen(cmd, cwd=REPO, stdout=out,
                            stderr=subprocess.STDOUT,
                            env=dict(os.environ, **(env or {})),
                            start_new_session=True)


def stop(proc) -> None:
    """End a process started by :func:`launch` and its children: an
    interrupt first (pytest then still writes its junit xml of the tests
    run so far), then SIGTERM, then SIGKILL."""
    for sig, grace in ((signal.SIGINT, 15), (signal.SIGTERM, 10),
                       (signal.SIGKILL, None)):
        if proc.poll() is not None:
            return
        os.killpg(proc.pid, sig)
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass


def call(cmd: List[str], log: str, timeout: float,
         env: Optional[dict] = None) -> str:
    """Run ``cmd`` for at most ``timeout`` seconds: ``'ok'``, ``'failed
    (rc N)'`` or ``'timed out'``."""
    proc = launch(cmd, log, env)
    try:
        rc = proc.wait(max(timeout, 1))
    except subprocess.TimeoutExpired:
        stop(proc)
        return 'timed out'
    return 'ok' if rc == 0 else f'failed (rc {rc})'


def data_commands(args) -> Dict[str, List[str]]:
    """Data folder -> the command that writes it: the evidence's proxy
    (full size; tiny: 1% at 32 px) and the speed recipe's 448 px proxy."""
    make = [sys.executable, 'tools/make_proxy_data.py', '--like', 'voc']
    if args.tiny:
        return {evidence_root(args): make + [
            '--fraction', str(args.tiny_fraction), '--image-size', '32',
            '--out-dir', evidence_root(args)]}
    return {
        evidence_root(args): make + ['--out-dir', evidence_root(args)],
        'data/proxy-voc-448': make + ['--fraction', '0.05', '--image-size',
                                      '448', '--out-dir',
                                      'data/proxy-voc-448'],
    }


def evidence_root(args) -> str:
    """The evidence's data folder, as accuracy.py names it."""
    return (f'data/{SUITE}-f{args.tiny_fraction:g}' if args.tiny else
            f'data/{SUITE}')


def ready(root: str) -> bool:
    return osp.isfile(osp.join(REPO, root, 'formatted_val_labels_obs.npy'))


def start_data(run: Run) -> Dict[str, object]:
    """Start writing the data the parts need, in the background (CPU work
    beside the GPU tier); folder -> process (None: already there)."""
    procs = {}
    for root, cmd in data_commands(run.args).items():
        procs[root] = None if ready(root) else launch(
            cmd, osp.join(run.args.out, 'data.log'))
    return procs


def wait_data(run: Run, procs: dict, root: str) -> bool:
    proc = procs.get(root)
    if proc is not None:
        try:
            proc.wait(max(run.left(), 1))
        except subprocess.TimeoutExpired:
            stop(proc)
    return ready(root)


def part_tier(run: Run) -> None:
    """The GPU tier; where the committed tier passed whole, only the tests
    it lacks (added since), merged into it."""
    args = run.args
    found = run.committed('gpu_tier.json')
    folder = osp.join(args.out, 'gpu_tier')
    os.makedirs(folder, exist_ok=True)
    tests, kept = list(args.gpu_tests), {}
    if found and found['failed'] == found['errors'] == 0:
        kept = found['tests']
        tests = [t for t in gpu_tests(args, folder)
                 if junit_name(t) not in kept]
        if not tests:
            return run.part('tier', status='skipped: committed, all passed')
    junit = osp.join(folder, 'junit.xml')
    started = time.time()
    status = call([sys.executable, '-m', 'pytest', *tests, '-m',
                   'gpu', '-q', '-rs', '-p', 'no:cacheprovider',
                   # a module this machine cannot import loses its own tests
                   # only
                   '--continue-on-collection-errors',
                   f'--junitxml={junit}'],
                  osp.join(folder, 'pytest.log'),
                  run.cap('tier'))
    result = tier_result(junit, kept) if osp.isfile(junit) else dict(
        tests=kept, passed=0, failed=0, errors=0, skipped=0)
    result.update(kind=run.kind(), environment=run.manifest['environment'],
                  command='pytest ' + ' '.join(args.gpu_tests) + ' -m gpu',
                  status=status, seconds=round(time.time() - started, 1))
    write_json(osp.join(args.out, 'gpu_tier.json'), result)
    run.part('tier', status=status, **{k: result[k] for k in (
        'passed', 'failed', 'errors', 'skipped')})


def gpu_tests(args, folder: str) -> List[str]:
    """The node ids of the GPU tier's tests (collected, not run)."""
    log = osp.join(folder, 'collect.log')
    call([sys.executable, '-m', 'pytest', *args.gpu_tests, '-m', 'gpu',
          '--collect-only', '-q', '-p', 'no:cacheprovider'], log, 120)
    with open(log) as f:
        return [line.strip() for line in f if '::' in line]


def junit_name(node_id: str) -> str:
    """A test's name in the junit xml (``tier_result``) from its node id:
    ``tests/gpu/test_gpu.py::test_x[a]`` -> ``tests.gpu.test_gpu::test_x[a]``.
    """
    path, name = node_id.split('::', 1)
    return f"{osp.splitext(path)[0].replace('/', '.')}::{name}"


def tier_result(junit: str, kept: Optional[dict] = None) -> dict:
    """Outcome per test of a junit xml, after the tests of ``kept`` (an
    earlier tier's)."""
    tests = dict(kept or {})
    for case in ET.parse(junit).getroot().iter('testcase'):
        if case.get('name') is None:  # pytest's entry for an interruption
            continue
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = 'passed'
        for tag in ('failure', 'error', 'skipped'):
            node = case.find(tag)
            if node is not None:
                outcome = dict(failure='failed', error='errors')[tag] \
                    if tag != 'skipped' else 'skipped'
                tests[name] = dict(outcome=outcome,
                                   message=(node.get('message') or '')[:500],
                                   seconds=float(case.get('time', 0)))
                break
        else:
            tests[name] = dict(outcome=outcome,
                               seconds=float(case.get('time', 0)))
    counts = {k: sum(t['outcome'] == k for t in tests.values())
              for k in ('passed', 'failed', 'errors', 'skipped')}
    return dict(tests=tests, **counts)


def part_speed(run: Run, procs: dict) -> None:
    args = run.args
    found = run.committed('gpu.json')
    if found and found.get('complete'):
        return run.part('speed', status='skipped: committed, complete')
    # a quiet host: the step is host-bound, and the data writing beside it
    # on every core made the H100's first fp32 rows 4x slower
    for root in procs:
        wait_data(run, procs, root)
    folder = osp.join(args.out, 'speed')
    os.makedirs(folder, exist_ok=True)
    cap = run.cap('speed')
    cmd = [sys.executable, '-m', 'tools.benchmark.speed_gpu', '--device',
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
    elif ready('data/proxy-voc-448'):
        cmd += ['--data-root', 'data/proxy-voc-448']
    else:
        cmd += ['--tables', 'heads']
    if found:  # committed, incomplete: continued if of this device
        shutil.copy(osp.join(args.results_dir, 'gpu.json'),
                    osp.join(folder, 'previous.json'))
        cmd += ['--resume', osp.join(folder, 'previous.json')]
    status = call(cmd, osp.join(folder, 'speed_gpu.log'), cap)
    path = osp.join(folder, 'gpu.json')
    if osp.isfile(path):
        with open(path) as f:
            record = json.load(f)
        record.update(kind=run.kind(),
                      run_environment=run.manifest['environment'])
        write_json(path, record)
    run.part('speed', status=status,
             complete=osp.isfile(path) and record['complete'])


def continued(found: dict, args) -> bool:
    """Whether ``speed_gpu.py --resume`` keeps the rows of ``found``: the
    same code, machine and versions (else it measures every table)."""
    from types import SimpleNamespace

    from tools.benchmark.gpu_steps import environment
    return (found.get('code'), found.get('environment')) == (
        code_fingerprint(),
        environment(SimpleNamespace(device=args.device)))


def profile_runs(args) -> Dict[str, tuple]:
    """Profiled run -> its config and --cfg-options (the evidence's
    settings); LASD's gives its runs' cost against AN's (:func:`costs`)."""
    base = [f'{loader}.dataset.data_root={evidence_root(args)}'
            for loader in ('train_dataloader', 'val_dataloader',
                           'test_dataloader')] + [
        'train_dataloader.num_workers=1', 'randomness.seed=0']
    cached = base + fast_options(args)
    return {'decoding files': (PROXY_CONFIG, base),
            'image cache': (PROXY_CONFIG, cached),
            'LASD, image cache': (LASD_CONFIG, cached),
            **{label: (PROXY_CONFIG, cached + compiled(args, label))
               for label in COMPILED}}


def compiled(args, label: str) -> List[str]:
    """The --cfg-options of compiled mode ``label`` (--tiny: the compile
    path on the CPU with dynamo's eager backend, without inductor's
    build)."""
    return ['compile.backend=eager'] if args.tiny else COMPILED[label]


def profiled(run: Run) -> List[dict]:
    """The profile's runs: this command's ``gpu_profile.json`` (which holds
    the committed runs too), else the committed one."""
    return load(osp.join(run.args.out, 'gpu_profile.json')).get('runs') or (
        run.committed('gpu_profile.json') or {}).get('runs', [])


def costs(run: Run) -> Dict[str, float]:
    """Method -> its run's cost against AN's: LASD's from the profile's
    iterations from the image cache (this command's, else the committed),
    else :data:`COST`."""
    found = {r['label']: r['iteration_s']['median']
             for r in profiled(run)}
    if {'image cache', 'LASD, image cache'} <= set(found):
        return dict(COST, lasd=found['LASD, image cache'] /
                    found['image cache'])
    return COST


def evidence_mode(run: Run, eager_s: float) -> Tuple[str, List[str], float]:
    """The evidence runs' mode, its --cfg-options and its run's projected
    share of an eager run's ``eager_s`` seconds.

    ``--evidence-mode auto`` takes the compiled mode of the profile whose
    run projects shortest, if at most :data:`SWITCH` of an eager run's:
    the eager run's seconds scaled by the two profiles' iteration times,
    plus twice the compiled profile's longer whole run (its compilation: a
    run compiles again for each epoch's last, smaller batch, which the
    profile does not have; seen on the CPU).
    """
    mode = run.args.evidence_mode
    found = {r['label']: r for r in profiled(run)}
    if mode != 'auto':
        return mode, compiled(run.args, mode) if mode in COMPILED else [], 1.
    eager = found.get('image cache')
    if not eager or eager_s <= 0:
        return 'eager', [], 1.
    shares = {
        label: (eager_s * r['iteration_s']['median'] /
                eager['iteration_s']['median'] + 2 * (r['wall_s'] -
                                                      eager['wall_s'])
                ) / eager_s
        for label, r in found.items() if label in COMPILED
    }
    best = min(shares, key=shares.get, default=None)
    if best is None or shares[best] > SWITCH:
        return 'eager', [], 1.
    return best, compiled(run.args, best), round(shares[best], 3)


def fast_options(args) -> List[str]:
    """The image cache and the evaluation batch of the evidence's runs
    (the same batches: tests/datasets/test_image_cache.py)."""
    from spml_mm.datasets.image_cache import cache_options
    return cache_options(cache_file(args)) + eval_options(args)


def eval_options(args) -> List[str]:
    return [f'{loader}.batch_size={args.eval_batch}'
            for loader in ('val_dataloader', 'test_dataloader')]


def cache_file(args) -> str:
    return osp.join(evidence_root(args), 'image_cache', 'images.npy')


def make_cache(run: Run) -> bool:
    """The evidence's image cache (all images of the proxy)."""
    path = cache_file(run.args)
    if osp.isfile(osp.join(REPO, osp.splitext(path)[0] + '.json')):
        return True
    status = call([sys.executable, 'tools/cache_images.py', PROXY_CONFIG,
                   '--out', path, '--cfg-options'] + [
        f'{loader}.dataset.data_root={evidence_root(run.args)}'
        for loader in ('train_dataloader', 'val_dataloader',
                       'test_dataloader')],
        osp.join(run.args.out, 'data.log'), run.left())
    return status == 'ok'


def weights(run: Run) -> bool:
    if osp.isfile(osp.join(REPO, 'checkpoints/efficientnet-lite0_timm.pth')):
        return True
    return call([sys.executable, 'tools/convert_efficientnet_lite.py'],
                osp.join(run.args.out, 'data.log'), run.left()) == 'ok'


def part_profile(run: Run, procs: dict) -> None:
    profile(run, procs, 'profile',
            [label for label in profile_runs(run.args)
             if label not in COMPILED])


def part_compile(run: Run, procs: dict) -> None:
    profile(run, procs, 'compile', COMPILED)


def profile(run: Run, procs: dict, part: str, labels: List[str]) -> None:
    """The profile runs ``labels`` not yet in the results, added to
    ``gpu_profile.json``."""
    args = run.args
    found = profiled(run)
    todo = {label: spec for label, spec in profile_runs(args).items()
            if label in labels and label not in {r['label'] for r in found}}
    if not todo:
        return run.part(part, status='skipped: committed')
    if part == 'compile' and not args.tiny and run.left() < COMPILE_NEED:
        return run.part(part, status=f'skipped: under {COMPILE_NEED} s left')
    if not (wait_data(run, procs, evidence_root(args)) and weights(run)
            and make_cache(run)):
        return run.part(part, status='no data')
    folder = osp.join(args.out, 'profile')
    os.makedirs(folder, exist_ok=True)
    results, statuses = list(found), []
    iters = ['--iters', '4', '--skip', '1', '--active', '1'] if args.tiny \
        else ['--iters', '150', '--skip', '30', '--active', '10']
    deadline = time.time() + run.cap(part)
    for i, (label, (config, options)) in enumerate(todo.items()):
        # an even share of the time left: a fast run leaves its rest to
        # the runs after it (a compiled run builds for long)
        cap = (deadline - time.time()) / (len(todo) - i)
        out = osp.join(folder, label.replace(' ', '_').replace(',', ''))
        statuses.append(call(
            [sys.executable, '-m', 'tools.benchmark.profile_train',
             config, '--out', out, '--label', label, *iters,
             '--cfg-options', *options], osp.join(folder, 'profile.log'),
            cap, env=dict(OMP_NUM_THREADS='2')))
        if osp.isfile(osp.join(out, 'profile.json')):
            with open(osp.join(out, 'profile.json')) as f:
                results.append(json.load(f))
    if len(results) > len(found):
        write_json(osp.join(args.out, 'gpu_profile.json'),
                   dict(kind=run.kind(),
                        environment=run.manifest['environment'],
                        runs=results))
    run.part(part, status=', '.join(statuses), runs=len(results))


def part_evidence(run: Run, procs: dict) -> None:
    from tools.benchmark.pages.accuracy import chosen_lrs, compile_options
    from tools.benchmark.suites import suite_config
    from tools.benchmark.training import searched_run
    args = run.args
    folder = osp.join(args.out, 'evidence')
    os.makedirs(folder, exist_ok=True)
    name = evidence_name(args)
    search_json = osp.join(folder, f'{name}_lr_search.json')
    seeds_json = osp.join(folder, f'{name}.json')
    # the model teacher's record and score file (the path its methods'
    # runs name; committed beside the record)
    record, scores = osp.join(folder, f'{name}_teacher.json'), osp.join(
        REPO, teacher_file(args))
    # the committed runs, which the tool skips (--tiny writes other files:
    # its fraction is in their names)
    for path in (search_json, seeds_json):
        committed = osp.join(args.results_dir, osp.basename(path))
        if osp.isfile(committed) and not osp.isfile(path):
            shutil.copy(committed, path)
    if not (wait_data(run, procs, evidence_root(args)) and weights(run)
            and make_cache(run)):
        return run.part('evidence', status='no data')
    committed = osp.join(args.results_dir, f'{name}_teacher')
    if osp.isfile(committed + '.npz') and not osp.isfile(scores):
        os.makedirs(osp.dirname(scores), exist_ok=True)
        shutil.copy(committed + '.npz', scores)
        shutil.copy(committed + '.json', record)
    methods = [m for m in args.methods if has_config(m)]
    if methods != args.methods:
        run.part('evidence', no_config=[
            suite_config(SUITE, m, 'finetune') for m in args.methods
            if m not in methods])
    common = [sys.executable, '-m', 'tools.benchmark.accuracy', '--suite',
              SUITE, '--regime', 'finetune', '--out-dir', folder,
              '--work-root', osp.join(args.work, 'evidence')]
    if args.tiny:
        common += ['--fraction', f'{args.tiny_fraction:g}']
    options = ['--cfg-options', 'train_dataloader.num_workers=1',
               *fast_options(args), *args.tiny_options]
    running: Dict[tuple, tuple] = {}
    finished, started, log = [], [], osp.join(folder, 'runs.log')
    # a method whose compiled run failed trains eagerly from then on, and
    # that run once more
    eager, again = set(), set()

    def todo():
        """The runs not yet recorded and ready (:func:`evidence_queue`)."""
        return [t for t in evidence_queue(
            methods, load(search_json), load(seeds_json), args.seeds,
            args.tiny, osp.isfile(scores)) if t not in running]

    def command(task) -> List[str]:
        """An evidence run's command; the model teacher's at the
        full-label bound's searched rate."""
        kind, method, value = task
        if kind == 'teacher':
            return teacher_command(args, record,
                                   chosen_lrs(load(search_json))['full'])
        return common + ['--methods', method] + (
            ['--lr-search', value] if kind == 'lr' else
            ['--searched-lr', '--seeds', str(value)]) + task_options(task)

    def price(task) -> float:
        """A run's cost against AN's."""
        return cost.get('teacher' if task[0] == 'teacher' else task[1], 1.)

    walls = []  # this command's finished runs: seconds, as AN's cost
    samples, next_sample = [], 0.
    side_by_side, whole, was_compiled = {}, {}, {}
    cost = costs(run)
    trained = [r['seconds'] / cost.get(m, 1.)
               for path in (search_json, seeds_json)
               for m, runs in load(path).items() for r in runs.values()]
    # an eager run's seconds: the jsons' training times and a test pass
    eager_s = sorted(trained)[len(trained) // 2] + 30 if trained \
        else args.run_estimate
    mode, mode_options, share = evidence_mode(run, eager_s)
    if mode_options:  # a method trains in one mode: one with runs recorded
        # eagerly stays so
        eager.update(m for path in (search_json, seeds_json)
                     for m, runs in load(path).items()
                     if not all(compile_options(r) for r in runs.values()))
    run.part('evidence', mode=mode, projected_share=share,
             eager_methods=sorted(eager))

    def compiled_run(task) -> bool:
        return bool(mode_options) and task[0] != 'teacher' and \
            task[1] not in eager

    def task_options(task) -> List[str]:
        reads = [f'model.head.label_bank.score_file={teacher_file(args)}'
                 ] if task[1] in TEACHER_METHODS else []
        return options + reads + (mode_options if compiled_run(task) else
                                  [])

    def done(task) -> float:
        """The share of a run's training already done: 1 for a seed the
        rate search trained (only recorded), a stopped run's checkpoint's
        share (resumed), else 0."""
        kind, method, value = task
        if kind == 'seed' and searched_run(load(search_json), method, value,
                                           task_options(task)[1:],
                                           'spml/mAP'):
            return 1.
        return share_done(work_dir(args, task))

    def estimate(task):
        """Seconds a run takes, launch to exit: this command's whole runs,
        else an eager run's (in the compiled mode, its projected share);
        for the share of it not yet done."""
        if walls and compiled_run(task) == bool(mode_options):
            base = sorted(walls)[len(walls) // 2]
        else:
            base = eager_s * (share if compiled_run(task) else 1.)
        return max(base * price(task) * (1 - done(task)), 30)

    try:
        while True:
            for key, (proc, since) in list(running.items()):
                if proc.poll() is not None:
                    del running[key]
                    seconds = time.time() - since
                    finished.append(dict(run=list(key), rc=proc.returncode,
                                         seconds=round(seconds, 1),
                                         side_by_side=side_by_side.pop(key),
                                         compiled=was_compiled[key]))
                    if proc.returncode == 0 and whole.pop(key) and \
                            was_compiled[key] == bool(mode_options):
                        walls.append(seconds / price(key))
                    elif proc.returncode and was_compiled[key]:
                        eager.add(key[1])
                        again.add(key)
                    if key[0] == 'teacher' and proc.returncode == 0:
                        # returned beside its record, committed with it
                        shutil.copy(scores, osp.join(folder,
                                                     f'{name}_teacher.npz'))
                    keep_logs(args, key, folder)
            for task in todo():
                if len(running) >= args.jobs:
                    break
                # a failed run is not run again in this command, but eagerly
                # if it failed compiled
                if started.count(task) > (task in again):
                    continue
                if estimate(task) > run.left() - 15:
                    continue
                whole[task] = done(task) == 0  # a measure of a whole run
                was_compiled[task] = compiled_run(task)
                running[task] = (launch(command(task), log,
                                        dict(OMP_NUM_THREADS='2')),
                                 time.time())
                started.append(task)
            for key in running:
                side_by_side[key] = max(side_by_side.get(key, 0),
                                        len(running))
            if time.time() >= next_sample:  # to size --jobs on this machine
                samples.append(dict(
                    s=round(time.time() - run.start), running=len(running),
                    gpu_busy=gpu_busy(), load=round(os.getloadavg()[0], 1)))
                next_sample = time.time() + 10
            run.part('evidence', running=[list(k) for k in running],
                     finished=finished, left=len(todo()) + len(running),
                     samples=samples)
            if not running:
                break
            if run.left() < 5:  # the runs end below
                run.part('evidence', stopped=[list(k) for k in running])
                break
            time.sleep(2 if not args.tiny else 0.5)
    finally:  # at the deadline, or on an error here
        for proc, _ in running.values():
            stop(proc)
    search, seeds = load(search_json), load(seeds_json)
    if finished:  # the pages name this machine: only when it ran something
        render_evidence(run, folder, name, search, seeds)
    left = len(todo())
    run.part('evidence', status=f'{left} runs left' if left else 'done',
             lr_runs=sum(len(v) for v in search.values()),
             seed_runs=sum(len(v) for v in seeds.values()))


def render_evidence(run: Run, folder: str, name: str, search: dict,
                    seeds: dict) -> None:
    """The evidence pages of every run in the jsons (the last invocation of
    the tool to finish wrote its own before another's run ended)."""
    from tools.benchmark import suites
    from tools.benchmark.pages import accuracy
    title = suites.SUITE_TITLES[SUITE] + (
        f', at {run.args.tiny_fraction:g} of its size' if run.args.tiny
        else '')
    command = run.manifest['command']
    if search:
        accuracy.write_lr_search_page(search, folder, name, title, SUITE,
                                      'finetune', 0, 'spml/mAP', command)
    if seeds:
        methods = [m for m in suites.METHODS if m in seeds]
        accuracy.write_outputs(accuracy.summarize(seeds, methods), folder,
                               command, False, suite=SUITE, output=name,
                               title=title, runs=seeds)


def has_config(method: str) -> bool:
    """Whether ``method`` has a fine-tuned config of the evidence's proxy
    (a teacher method may lack one: it then stays out of the queue, named
    in the manifest)."""
    from tools.benchmark.suites import suite_config
    return osp.isfile(osp.join(REPO, suite_config(SUITE, method,
                                                  'finetune')))


def evidence_name(args) -> str:
    """The evidence's results files' stem, as accuracy.py names them."""
    return f'accuracy_{SUITE}_finetune' + (
        f'-f{args.tiny_fraction:g}' if args.tiny else '')


def teacher_file(args) -> str:
    """The model teacher's scores of the evidence's training images
    (whole and in crops), where the teacher methods' runs read them."""
    return osp.join(evidence_root(args), 'teacher_scores',
                    'model_full_crops.npz')


def teacher_command(args, record: str, rate: float) -> List[str]:
    """The model teacher's command (``teacher_quality.py --model-teacher``,
    its record into ``record``): trained at ``rate``, eagerly, decoding its
    proxy instance's image files."""
    return [sys.executable, '-m', 'tools.benchmark.teacher_quality',
            '--model-teacher', record, '--fraction',
            f'{args.tiny_fraction if args.tiny else 1:g}', '--teacher-out',
            teacher_file(args), '--work-root',
            osp.dirname(work_dir(args, ('teacher', 'full', 0))),
            '--cfg-options', f'optim_wrapper.optimizer.lr={rate:g}',
            'train_dataloader.num_workers=1', *eval_options(args),
            *args.tiny_options]


def work_dir(args, key) -> str:
    """An evidence run's work dir, as accuracy.py names it; the model
    teacher's training's in the same folder, as teacher_quality.py names
    it."""
    kind, method, value = key
    parts = {'lr': ('lr_search', method, f'lr{float(value):g}'),
             'seed': (method, f'seed{value}'),
             'teacher': ('model_teacher', 'teacher')}[kind]
    return osp.join(REPO, args.work, 'evidence',
                    evidence_name(args)[len('accuracy_'):], *parts)


def share_done(work: str) -> float:
    """The share of its epochs a run stopped earlier (a command's deadline)
    has in its last checkpoint, which accuracy.py resumes from; 0 for none."""
    path = osp.join(work, 'last_checkpoint')
    configs = glob.glob(osp.join(work, '*.py'))
    if not (osp.isfile(path) and configs):
        return 0.
    with open(path) as f:
        found = re.search(r'epoch_(\d+)\.pth', f.read())
    if not found:
        return 0.
    from mmengine.config import Config
    epochs = Config.fromfile(configs[0]).train_cfg.max_epochs
    return min(int(found.group(1)) / epochs, 1.)


def gpu_busy() -> Optional[float]:
    """The GPU's utilisation in percent (``nvidia-smi``), None without."""
    try:
        out = subprocess.run(
            ['nvidia-smi', '--query-gpu=utilization.gpu',
             '--format=csv,noheader,nounits'], capture_output=True,
            text=True, timeout=10).stdout
        return float(out.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def keep_logs(args, key, folder) -> None:
    """A finished run's logs and scalars (no checkpoints) into the output
    folder."""
    kind, method, value = key
    work = work_dir(args, key)
    dest = osp.join(folder, 'runs', *(('teacher', ) if kind == 'teacher'
                                      else (method, str(value))))
    for path in glob.glob(osp.join(work, '*', '*.log')) + glob.glob(
            osp.join(work, '*', 'vis_data', 'scalars.json')):
        target = osp.join(dest, osp.relpath(path, work))
        os.makedirs(osp.dirname(target), exist_ok=True)
        shutil.copy(path, target)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', required=True,
                        help='the folder that comes back from the machine: '
                        f'manifest.json and {PACK}, the whole output')
    parser.add_argument('--stage', default='work_dirs/gpu_run/out',
                        help='where the output is written before it is '
                        'packed: a new or empty folder, or an earlier '
                        'command\'s stage (emptied first), apart from --out')
    parser.add_argument('--budget', type=float, default=540,
                        help='seconds from the start of tools/gpu_run.sh '
                        'after which no part starts and the running ones '
                        'end (default 540: a 600 s limit less a minute)')
    parser.add_argument('--device', default='cuda')
    parser.add_argument('--tiny', action='store_true',
                        help='rehearsal: tiny data and runs on --device cpu')
    parser.add_argument('--parts', nargs='+', default=list(PARTS),
                        choices=PARTS)
    parser.add_argument('--results-dir',
                        default=osp.join(REPO, 'docs', 'results'),
                        help='the committed results: parts and runs found '
                        'there for the same kind of run are skipped')
    parser.add_argument('--jobs', type=int, default=10,
                        help='evidence runs side by side (default 10: each '
                        'is bound by the host core launching its kernels, '
                        'so 16 cores and one GPU take about ten; the '
                        "manifest's samples of GPU use and load say whether "
                        'more fit)')
    parser.add_argument('--methods', nargs='+',
                        default=list(METHODS + TEACHER_METHODS),
                        choices=METHODS + TEACHER_METHODS)
    parser.add_argument('--eval-batch', type=int, default=256,
                        help='validation and test batch of the evidence '
                        'runs')
    parser.add_argument('--evidence-mode', default='auto',
                        choices=['auto', 'eager', *COMPILED],
                        help='how the evidence runs train (default auto: '
                        'the compiled mode of the profile that projects a '
                        f'run at most {SWITCH} of an eager one, else eager)')
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
    problem = folder_problem(args.out, args.back)
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
    run = Run(args)
    procs = start_data(run) if {'speed', 'profile', 'evidence'} & set(
        args.parts) else {}
    try:
        for name in args.parts:
            if run.left() < 10:
                run.part(name, status='skipped: budget spent')
                continue
            started = time.time()
            try:
                if name == 'tier':
                    part_tier(run)
                else:
                    globals()[f'part_{name}'](run, procs)
            except Exception as err:  # the next part still runs
                run.part(name, status=f'error: {type(err).__name__}: {err}')
            run.part(name, seconds=round(time.time() - started, 1))
    finally:
        for proc in procs.values():
            if proc is not None:
                stop(proc)
        run.manifest['finished'] = time.strftime('%Y-%m-%d %H:%M:%S UTC',
                                                 time.gmtime())
        run.save()
    print(json.dumps(run.manifest['parts'], indent=1))
    return run.manifest


if __name__ == '__main__':
    main()
