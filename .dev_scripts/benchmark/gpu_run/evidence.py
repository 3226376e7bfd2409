"""The ``evidence`` part: the full-size fine-tuned VOC-like queue through
``.dev_scripts/benchmark/accuracy.py`` (each method's rate search, then its
seeds; the model teacher and VLPL and AEVLP on its scores), up to ``--jobs``
runs side by side, each started only when it fits in the budget left, in the
compiled mode the profile projects fastest."""
import glob
import os
import os.path as osp
import re
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

from benchmark import suites
from benchmark.gpu_run import harness, inputs, profiling
from benchmark.gpu_run.evidence_queue import (TEACHER_METHODS,
                                              evidence_queue)
from benchmark.gpu_run.inputs import SUITE
from benchmark.pages import accuracy
from benchmark.pages.accuracy import chosen_lrs, compile_options
from benchmark.suites import suite_config
from benchmark.training import searched_run
from benchmark.common import REPO, load_json

#: a run's cost against AN's where the profile has not measured it (LASD
#: trains on three views of each image: 5.4 times AN's time in the CPU's
#: fine-tuned table at a fifth of the size); the model teacher: writing its
#: proxy instance (a minute on one core), its training, and scoring 17
#: views of each training image (the whole image and 4 x 4 crops)
COST = dict(lasd=5., teacher=2.)
#: a compiled mode trains the evidence when the profile projects its run at
#: most this share of an eager run's seconds
SWITCH = 0.8


def costs(run: harness.Run) -> Dict[str, float]:
    """Method -> its run's cost against AN's: LASD's from the profile's
    iterations from the image cache (this command's, else the committed),
    else :data:`COST`."""
    found = {r['label']: r['iteration_s']['median']
             for r in profiling.profiled(run)}
    if {'image cache', 'LASD, image cache'} <= set(found):
        return dict(COST, lasd=found['LASD, image cache'] /
                    found['image cache'])
    return COST


def evidence_mode(run: harness.Run,
                  eager_s: float) -> Tuple[str, List[str], float]:
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
    found = {r['label']: r for r in profiling.profiled(run)}
    if mode != 'auto':
        return mode, profiling.compiled(run.args, mode) if mode in \
            profiling.COMPILED else [], 1.
    eager = found.get('image cache')
    if not eager or eager_s <= 0:
        return 'eager', [], 1.
    shares = {
        label: (eager_s * r['iteration_s']['median'] /
                eager['iteration_s']['median'] + 2 * (r['wall_s'] -
                                                      eager['wall_s'])
                ) / eager_s
        for label, r in found.items() if label in profiling.COMPILED
    }
    best = min(shares, key=shares.get, default=None)
    if best is None or shares[best] > SWITCH:
        return 'eager', [], 1.
    return best, profiling.compiled(run.args, best), round(shares[best], 3)


class Evidence:
    """The evidence queue of one command: its results files, each run's
    command, options and estimated seconds, and the runs it started."""

    def __init__(self, run: harness.Run):
        self.run, self.args = run, run.args
        self.folder = osp.join(self.args.out, 'evidence')
        os.makedirs(self.folder, exist_ok=True)
        self.name = evidence_name(self.args)
        self.search_json = osp.join(self.folder, f'{self.name}_lr_search.json')
        self.seeds_json = osp.join(self.folder, f'{self.name}.json')
        # the model teacher's record and score file (the path its methods'
        # runs name; committed beside the record)
        self.record = osp.join(self.folder, f'{self.name}_teacher.json')
        self.scores = osp.join(REPO, teacher_file(self.args))
        self.log = osp.join(self.folder, 'runs.log')
        self.running: Dict[tuple, tuple] = {}
        self.finished, self.started = [], []
        # a method whose compiled run failed trains eagerly from then on,
        # and that run once more
        self.eager, self.again = set(), set()
        self.walls = []  # this command's finished runs: seconds, as AN's
        self.samples, self.next_sample = [], 0.
        self.side_by_side, self.whole, self.was_compiled = {}, {}, {}

    def copy_committed_runs(self) -> None:
        """The committed runs, which the tool skips (``--tiny`` writes
        other files: its fraction is in their names)."""
        for path in (self.search_json, self.seeds_json):
            committed = osp.join(self.args.results_dir, osp.basename(path))
            if osp.isfile(committed) and not osp.isfile(path):
                shutil.copy(committed, path)

    def plan(self) -> None:
        """The committed model teacher, the methods with a config, the
        runs' command and options, their costs and the mode they train
        in."""
        args = self.args
        committed = osp.join(args.results_dir, f'{self.name}_teacher')
        if osp.isfile(committed + '.npz') and not osp.isfile(self.scores):
            os.makedirs(osp.dirname(self.scores), exist_ok=True)
            shutil.copy(committed + '.npz', self.scores)
            shutil.copy(committed + '.json', self.record)
        self.methods = [m for m in args.methods if has_config(m)]
        if self.methods != args.methods:
            self.run.part('evidence', no_config=[
                suite_config(SUITE, m, 'finetune') for m in args.methods
                if m not in self.methods])
        self.common = [
            sys.executable, '-m', 'benchmark.accuracy', '--suite',
            SUITE, '--regime', 'finetune', '--out-dir', self.folder,
            '--work-root', osp.join(args.work, 'evidence')]
        if args.tiny:
            self.common += ['--fraction', f'{args.tiny_fraction:g}']
        self.options = ['--cfg-options', 'train_dataloader.num_workers=1',
                        *inputs.fast_options(args), *args.tiny_options]
        self.plan_mode()

    def plan_mode(self) -> None:
        """Each method's cost against AN's, an eager run's seconds (the
        jsons' training times and a test pass) and the mode the runs train
        in; a method with runs recorded eagerly stays eager."""
        self.cost = costs(self.run)
        recorded = [load_json(p) for p in (self.search_json,
                                           self.seeds_json)]
        trained = [r['seconds'] / self.cost.get(m, 1.) for found in recorded
                   for m, runs in found.items() for r in runs.values()]
        self.eager_s = sorted(trained)[len(trained) // 2] + 30 if trained \
            else self.args.run_estimate
        self.mode, self.mode_options, self.share = evidence_mode(
            self.run, self.eager_s)
        if self.mode_options:
            self.eager.update(
                m for found in recorded for m, runs in found.items()
                if not all(compile_options(r) for r in runs.values()))
        self.run.part('evidence', mode=self.mode,
                      projected_share=self.share,
                      eager_methods=sorted(self.eager))

    def todo(self) -> List[tuple]:
        """The runs not yet recorded and ready (``evidence_queue``)."""
        return [t for t in evidence_queue(
            self.methods, load_json(self.search_json),
            load_json(self.seeds_json), self.args.seeds, self.args.tiny,
            osp.isfile(self.scores)) if t not in self.running]

    def command(self, task) -> List[str]:
        """An evidence run's command; the model teacher's at the
        full-label bound's searched rate."""
        kind, method, value = task
        if kind == 'teacher':
            return teacher_command(
                self.args, self.record,
                chosen_lrs(load_json(self.search_json))['full'])
        return self.common + ['--methods', method] + (
            ['--lr-search', value] if kind == 'lr' else
            ['--searched-lr', '--seeds', str(value)]) + \
            self.task_options(task)

    def price(self, task) -> float:
        """A run's cost against AN's."""
        return self.cost.get('teacher' if task[0] == 'teacher' else task[1],
                             1.)

    def compiled_run(self, task) -> bool:
        return bool(self.mode_options) and task[0] != 'teacher' and \
            task[1] not in self.eager

    def task_options(self, task) -> List[str]:
        reads = [f'model.head.label_bank.score_file={teacher_file(self.args)}'
                 ] if task[1] in TEACHER_METHODS else []
        return self.options + reads + (
            self.mode_options if self.compiled_run(task) else [])

    def done(self, task) -> float:
        """The share of a run's training already done: 1 for a seed the
        rate search trained (only recorded), a stopped run's checkpoint's
        share (resumed), else 0."""
        kind, method, value = task
        if kind == 'seed' and searched_run(
                load_json(self.search_json), method, value,
                self.task_options(task)[1:], 'spml/mAP'):
            return 1.
        return share_done(work_dir(self.args, task))

    def estimate(self, task) -> float:
        """Seconds a run takes, launch to exit: this command's whole runs,
        else an eager run's (in the compiled mode, its projected share);
        for the share of it not yet done."""
        if self.walls and self.compiled_run(task) == bool(self.mode_options):
            base = sorted(self.walls)[len(self.walls) // 2]
        else:
            base = self.eager_s * (self.share if self.compiled_run(task)
                                   else 1.)
        return max(base * self.price(task) * (1 - self.done(task)), 30)

    def collect(self) -> None:
        """Record the runs that ended: their seconds (a whole run's, as
        AN's cost), a compiled failure's method eager from then on, the
        teacher's scores beside its record, and their logs."""
        for key, (proc, since) in list(self.running.items()):
            if proc.poll() is None:
                continue
            del self.running[key]
            seconds = time.time() - since
            compiled = self.was_compiled[key]
            self.finished.append(dict(
                run=list(key), rc=proc.returncode, seconds=round(seconds, 1),
                side_by_side=self.side_by_side.pop(key), compiled=compiled))
            if proc.returncode == 0 and self.whole.pop(key) and \
                    compiled == bool(self.mode_options):
                self.walls.append(seconds / self.price(key))
            elif proc.returncode and compiled:
                self.eager.add(key[1])
                self.again.add(key)
            if key[0] == 'teacher' and proc.returncode == 0:
                # returned beside its record, committed with it
                shutil.copy(self.scores, osp.join(
                    self.folder, f'{self.name}_teacher.npz'))
            keep_logs(self.args, key, self.folder)

    def start(self) -> None:
        """Start the ready runs that fit in ``--jobs`` and the budget left;
        a failed run is not run again in this command, but eagerly if it
        failed compiled."""
        for task in self.todo():
            if len(self.running) >= self.args.jobs:
                break
            if self.started.count(task) > (task in self.again):
                continue
            if self.estimate(task) > self.run.left() - 15:
                continue
            self.whole[task] = self.done(task) == 0  # a whole run's measure
            self.was_compiled[task] = self.compiled_run(task)
            self.running[task] = (harness.launch(
                self.command(task), self.log, dict(OMP_NUM_THREADS='2')),
                                  time.time())
            self.started.append(task)
        for key in self.running:
            self.side_by_side[key] = max(self.side_by_side.get(key, 0),
                                         len(self.running))

    def report(self) -> None:
        """The queue's state in the manifest, with a sample of GPU use and
        load every 10 s (to size ``--jobs`` on this machine)."""
        if time.time() >= self.next_sample:
            self.samples.append(dict(
                s=round(time.time() - self.run.start),
                running=len(self.running), gpu_busy=gpu_busy(),
                load=round(os.getloadavg()[0], 1)))
            self.next_sample = time.time() + 10
        self.run.part('evidence', running=[list(k) for k in self.running],
                      finished=self.finished,
                      left=len(self.todo()) + len(self.running),
                      samples=self.samples)

    def run_all(self) -> None:
        """Start and collect runs until none is running or the budget
        ends; the runs still running are stopped at the end, or on an
        error here."""
        try:
            while True:
                self.collect()
                self.start()
                self.report()
                if not self.running:
                    break
                if self.run.left() < 5:  # the runs end below
                    self.run.part('evidence', stopped=[
                        list(k) for k in self.running])
                    break
                time.sleep(2 if not self.args.tiny else 0.5)
        finally:
            for proc, _ in self.running.values():
                harness.stop(proc)

    def finish(self) -> None:
        """The pages of the runs (only when this command ran one: they
        name this machine) and the part's status."""
        search = load_json(self.search_json)
        seeds = load_json(self.seeds_json)
        if self.finished:
            render_evidence(self.run, self.folder, self.name, search, seeds)
        left = len(self.todo())
        self.run.part('evidence',
                      status=f'{left} runs left' if left else 'done',
                      lr_runs=sum(len(v) for v in search.values()),
                      seed_runs=sum(len(v) for v in seeds.values()))


def part_evidence(run: harness.Run, procs: dict) -> None:
    """The evidence queue's runs within the budget, the committed runs
    skipped; the pages of every run in the jsons."""
    queue = Evidence(run)
    queue.copy_committed_runs()
    if not inputs.evidence_ready(run, procs):
        return run.part('evidence', status='no data')
    queue.plan()
    queue.run_all()
    queue.finish()


def render_evidence(run: harness.Run, folder: str, name: str, search: dict,
                    seeds: dict) -> None:
    """The evidence pages of every run in the jsons (the last invocation of
    the tool to finish wrote its own before another's run ended)."""
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
    return osp.isfile(osp.join(REPO, suite_config(SUITE, method,
                                                  'finetune')))


def evidence_name(args) -> str:
    """The evidence's results files' stem, as accuracy.py names them."""
    return f'accuracy_{SUITE}_finetune' + (
        f'-f{args.tiny_fraction:g}' if args.tiny else '')


def teacher_file(args) -> str:
    """The model teacher's scores of the evidence's training images
    (whole and in crops), where the teacher methods' runs read them."""
    return osp.join(inputs.evidence_root(args), 'teacher_scores',
                    'model_full_crops.npz')


def teacher_command(args, record: str, rate: float) -> List[str]:
    """The model teacher's command (``teacher_quality.py --model-teacher``,
    its record into ``record``): trained at ``rate``, eagerly, decoding its
    proxy instance's image files."""
    return [sys.executable, '-m', 'benchmark.teacher_quality',
            '--model-teacher', record, '--fraction',
            f'{args.tiny_fraction if args.tiny else 1:g}', '--teacher-out',
            teacher_file(args), '--work-root',
            osp.dirname(work_dir(args, ('teacher', 'full', 0))),
            '--cfg-options', f'optim_wrapper.optimizer.lr={rate:g}',
            'train_dataloader.num_workers=1', *inputs.eval_options(args),
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
