"""The GPU command's harness: its budget, stage and manifest
(:class:`Run`), the folders it may write, and the processes its parts
start."""
import os
import os.path as osp
import platform
import shutil
import signal
import subprocess
import time
from typing import List, Optional

from benchmark.gpu_run import machine
from benchmark.common import REPO, dev_env, load_json, write_json

#: the most seconds each part may take (of the budget left)
#: (on an H100, 150 s for the speed tables measured the heads' table and 2
#: of the recipe's 18 rows)
CAPS = dict(tier=240, speed=300, profile=90, compile=300)
#: the file that marks a folder as a command's stage (emptied by the next)
STAGE_MARK = '.gpu_run_stage'
#: the file that marks the results folder a command carried forward into
RESULTS_MARK = '.gpu_run_results'


def carry_forward(args) -> None:
    """An earlier command's stage on this machine (the first command of a
    loan, before the second), not yet collected: its results join a copy of
    ``--results-dir`` (``<work>/results``, collected as ``gpu_collect`` does
    on the machine they come back to), which this command reads as committed,
    so that it continues what the earlier one measured instead of measuring
    it again."""
    from benchmark.gpu_run.collecting import collect
    earlier = load_json(osp.join(args.out, 'manifest.json'))
    if not earlier:
        return
    merged = osp.abspath(osp.join(args.work, 'results'))
    # the earlier command read ``merged`` itself: it holds the commands
    # before it already; else it is made again from the results folder
    if earlier.get('results_dir') != merged and \
            osp.abspath(args.results_dir) != merged:
        if osp.isdir(merged):
            if not osp.isfile(osp.join(merged, RESULTS_MARK)):
                print(f'{merged} was not written by tools/gpu_run.sh: the '
                      f'earlier stage {args.out} is not carried forward',
                      flush=True)
                return
            shutil.rmtree(merged)
        if osp.isdir(args.results_dir):
            shutil.copytree(args.results_dir, merged)
        os.makedirs(merged, exist_ok=True)
        with open(osp.join(merged, RESULTS_MARK), 'w') as f:
            f.write('the committed results and earlier commands\' stages, '
                    'read by tools/gpu_run.sh; its next command may replace '
                    'this folder\n')
    try:
        collect(args.out, merged)
    except Exception as err:  # GPU time is short: go on
        print(f'the earlier stage {args.out} was not carried forward '
              f'({err!r}): its results are measured again', flush=True)
        return
    args.results_dir = merged


class Run:
    """The command's state: budget, output folder and manifest."""

    def __init__(self, args):
        self.args = args
        self.start = float(os.environ.get('GPU_RUN_START', time.time()))
        self.deadline = self.start + args.budget
        if osp.isdir(args.out):  # an earlier command's (parse_args)
            carry_forward(args)
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
            budget_s=args.budget,
            results_dir=osp.abspath(args.results_dir), parts={})
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
        machine.pack(self.args.out, self.args.back, leave_out=(STAGE_MARK, ))
        shutil.copy(osp.join(self.args.out, 'manifest.json'), self.args.back)

    def committed(self, name: str) -> Optional[dict]:
        """A result json of ``--results-dir`` made by the same kind of
        run."""
        path = osp.join(self.args.results_dir, name)
        if not osp.isfile(path):
            return None
        found = load_json(path)
        return found if found.get('kind') == self.kind() else None


def environment(device: str) -> dict:
    """The device, the versions and the machine, for the manifest."""
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
        ours = load_json(manifest).get('command', '').startswith(
            'bash tools/gpu_run.sh')
    except (ValueError, AttributeError):
        ours = False
    for name in ('manifest.json', machine.PACK):
        if osp.exists(osp.join(back, name)) and not ours:
            return (f'--out {back} holds a {name} that is not a '
                    'tools/gpu_run.sh output; give another folder')
    return None


def launch(cmd: List[str], log: str, env: Optional[dict] = None):
    """Start ``cmd`` in the repository root in its own process group (with
    .dev_scripts on the path), its output to ``log``."""
    out = open(log, 'a')
    out.write(f'$ {" ".join(cmd)}\n')
    out.flush()
    return subprocess.Popen(cmd, cwd=REPO, stdout=out,
                            stderr=subprocess.STDOUT,
                            env=dev_env(**(env or {})),
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
