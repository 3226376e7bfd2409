"""Where the time of a training run goes: waiting for data against the
training step, per iteration, and the operators of a window of iterations
(``torch.profiler``, with CUDA kernels on a GPU).

Trains a config through the runner ``tools/train.py`` builds, for
``--iters`` iterations without validation, and writes ``profile.json`` and
``profile.md`` under ``--out`` (default ``work_dirs/profile_train``): the
median and mean seconds an iteration spent waiting for its batch and in the
step (the step is timed as the host sees it: without a synchronisation, a
GPU step shows up as the next wait on the GPU), the iterations per second,
and the operators that took the most time.

Example:
    PYTHONPATH=.dev_scripts python -m benchmark.profile_train \\
        configs/an/efficientnet-lite0_proxy-voc.py --iters 200 \\
        --cfg-options train_dataloader.num_workers=1
"""
import argparse
import json
import os
import os.path as osp
import statistics
import sys
import tempfile
import time

import torch
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from spml_mm.utils import add_cfg_options
from benchmark.pages.gpu_profile import render

#: what :class:`IterationSplitHook` measured (the runner builds the hook
#: from a config, which copies its arguments)
RECORD = {}


@HOOKS.register_module()
class IterationSplitHook(Hook):
    """Record each training iteration's wait for data and its step, and
    profile iterations ``[skip, skip + active)`` with ``torch.profiler``.

    Fills :data:`RECORD` with ``data_s`` and ``step_s`` lists and the
    profiler's ``operators`` tables.

    Args:
        skip (int): Iterations before the profiled window. Defaults to 10.
        active (int): Profiled iterations. Defaults to 10.
    """

    priority = 'VERY_HIGH'

    def __init__(self, skip: int = 10, active: int = 10):
        self.record, self.skip, self.active = RECORD, skip, active
        self.record.update(data_s=[], step_s=[])
        self.profiler = None

    def before_train(self, runner) -> None:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.profiler = torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(
                wait=max(self.skip - 1, 0), warmup=1, active=self.active,
                repeat=1),
            on_trace_ready=self._tables)
        self.profiler.start()
        self.last = time.perf_counter()

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        now = time.perf_counter()
        self.record['data_s'].append(now - self.last)
        self.last = now

    def after_train_iter(self, runner, batch_idx, data_batch=None,
                         outputs=None) -> None:
        now = time.perf_counter()
        self.record['step_s'].append(now - self.last)
        self.last = now
        self.profiler.step()
        self.last = time.perf_counter()  # the profiler's own work left out

    def after_train(self, runner) -> None:
        self.profiler.stop()

    def _tables(self, profiler) -> None:
        averages = profiler.key_averages()
        sorts = ['self_cpu_time_total'] + (
            ['self_cuda_time_total'] if torch.cuda.is_available() else [])
        self.record['operators'] = {
            key: averages.table(sort_by=key, row_limit=20,
                                max_name_column_width=60)
            for key in sorts
        }


def summary(values):
    return dict(median=statistics.median(values),
                mean=statistics.fmean(values))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('--iters', type=int, default=100)
    parser.add_argument('--skip', type=int, default=20,
                        help='iterations before the profiled window and '
                        'before the timed ones')
    parser.add_argument('--active', type=int, default=10,
                        help='profiled iterations')
    parser.add_argument('--out', default=osp.join('work_dirs',
                                                  'profile_train'))
    parser.add_argument('--label', default='',
                        help='a name for this run in the page')
    add_cfg_options(parser, 'train_dataloader.batch_size=64')
    args = parser.parse_args(argv)
    import spml_mm  # noqa: F401
    from spml_mm.utils import drop_disabled_hooks, run_runner
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    batch = cfg.train_dataloader.batch_size
    cfg.train_dataloader.dataset.indices = args.iters * batch
    cfg.train_dataloader.drop_last = True
    cfg.train_cfg.max_epochs = 1
    cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
    cfg.default_hooks.checkpoint = None
    cfg.launcher = 'none'
    if not cfg.train_dataloader.get('num_workers'):
        cfg.train_dataloader.persistent_workers = False
    record = RECORD
    cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
        dict(type='IterationSplitHook', skip=args.skip,
             active=args.active)
    ]
    # early stopping and the best checkpoint watch a validation metric
    for name in ('early_stopping', ):
        cfg.default_hooks.pop(name, None)
    cfg.custom_hooks = [h for h in cfg.custom_hooks
                        if h['type'] != 'SPMLEarlyStoppingHook']
    drop_disabled_hooks(cfg)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        cfg.work_dir = work
        run_runner(cfg, 'train')
    wall = time.perf_counter() - start
    data, step = record['data_s'][args.skip:], record['step_s'][args.skip:]
    iteration = [d + s for d, s in zip(data, step)]
    command = ' '.join(['PYTHONPATH=.dev_scripts',
                        'python -m benchmark.profile_train',
                        *(sys.argv[1:] if argv is None else argv)])
    device = (torch.cuda.get_device_name() if torch.cuda.is_available()
              else 'CPU')
    result = dict(
        label=args.label, command=command, device=device,
        torch=torch.__version__, cuda=torch.version.cuda,
        batch_size=batch, iterations=len(iteration), wall_s=wall,
        data_s=summary(data), step_s=summary(step),
        iteration_s=summary(iteration),
        iterations_per_s=len(iteration) / sum(iteration),
        data_share=sum(data) / sum(iteration),
        operators=record.get('operators', {}))
    os.makedirs(args.out, exist_ok=True)
    with open(osp.join(args.out, 'profile.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(osp.join(args.out, 'profile.md'), 'w') as f:
        f.write(render([result]))
    print(render([result]))
    print(f'wrote {osp.join(args.out, "profile.md")} and profile.json '
          'beside it')
    return result


if __name__ == '__main__':
    main()
