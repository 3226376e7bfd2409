"""The operators of every head's training step: why a head is slower than
MMPretrain's.

Profiles the ``train_step`` that ``speed_gpu.py``'s heads table times
(each method's head as its COCO config builds it, and MMPretrain's
``MultiLabelLinearClsHead`` with sigmoid BCE as ``stock``) with
``torch.profiler`` and counts its ATen operators per step: those the step
calls itself, not the ones they call inside (on a GPU, about a kernel
launch each, so the count is a fair proxy for launch overhead), and how
many of them are the optimizer's (``zero_grad`` and ``step``) and the
head's loss (its forward). It also records the optimizer's parameter
groups and the views per sample. ``--default-constructor`` profiles each
head a second time with its optimizer built by MMEngine's
``DefaultOptimWrapperConstructor`` (a group per parameter under a
``paramwise_cfg``), the constructor before ``GroupedOptimWrapperConstructor``.

On the CPU the optimizer runs PyTorch's ``foreach`` update, its default on
CUDA, so the counts are those of a GPU step. Writes ``head_profile.json``
and ``head_profile.md`` under ``--out``; ``speed_gpu.py --render gpu.json
--op-profile head_profile.json`` renders it under the heads table.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.head_profile --device cpu --img-size 64 \\
        --batch-size 4 --default-constructor --out docs/results
"""
import argparse
import copy
import os
import os.path as osp
import sys
from typing import Dict, Optional

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from benchmark import gpu_steps
from benchmark.pages.head_profile import PHASES, page
from benchmark.common import commit, write_json

#: where an operator belongs: the record_function ranges above it
OPTIMIZER_RANGES = ('Optimizer.step#', 'Optimizer.zero_grad#')
LOSS_RANGE = 'head_profile.loss'


def phase_of(event) -> Optional[str]:
    """The phase of a profiler event that is a step's own ATen operator,
    None for any other event (one called inside an operator, or not
    ATen)."""
    if not event.name.startswith('aten::'):
        return None
    phase = 'other'
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith('aten::'):
            return None
        if parent.name.startswith(OPTIMIZER_RANGES):
            phase = 'optimizer'
        elif parent.name == LOSS_RANGE and phase == 'other':
            phase = 'loss'
        parent = parent.cpu_parent
    return phase


def count_step(model, step, batches, iters: int) -> Dict[str, float]:
    """ATen operators per step by phase (and ``total``), over ``iters``
    profiled steps after two of warm-up."""
    head = model.head
    loss, own = head._get_loss, '_get_loss' in vars(head)

    def named_loss(*args, **kwargs):
        with record_function(LOSS_RANGE):
            return loss(*args, **kwargs)

    head._get_loss = named_loss  # the loss forward, named in the trace
    try:
        for _ in range(2):
            step(batches())
        data = [batches() for _ in range(iters)]  # made outside the trace
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for batch in data:
                step(batch)
    finally:  # the head as it was
        if own:
            head._get_loss = loss
        else:
            del head._get_loss
    counts = dict.fromkeys(PHASES, 0)
    for event in prof.events():
        phase = phase_of(event)
        if phase:
            counts[phase] += 1
    counts = {k: v / iters for k, v in counts.items()}
    counts['total'] = sum(counts.values())
    return counts


def profile_head(method: str, args, default_constructor: bool = False
                 ) -> dict:
    """The profile of one head (``stock``: MMPretrain's) in fp32."""
    cfg = gpu_steps.load(method, 'coco', args)
    views = gpu_steps.num_views(cfg)
    cfg.optim_wrapper = copy.deepcopy(cfg.optim_wrapper)
    if default_constructor:
        cfg.optim_wrapper.pop('constructor', None)
    if args.device == 'cpu':  # the update PyTorch runs on CUDA
        cfg.optim_wrapper.optimizer.foreach = True
    model, wrapper, step = gpu_steps.build(cfg, args.device,
                                           args.batch_size)
    data = gpu_steps.synthetic_batch(args.batch_size, args.img_size, 80,
                                     views)
    ops = count_step(model, lambda d: step(d, wrapper),
                     lambda: gpu_steps.fresh(data), args.iters)
    return dict(param_groups=len(wrapper.optimizer.param_groups),
                views=views, ops=ops)


def profile_heads(args, record: dict) -> None:
    """Fill ``record['heads']``: method -> :func:`profile_head`, with
    ``default_constructor`` the same under MMEngine's constructor where
    the config selects another."""
    for method in ['stock'] + args.methods:
        result = profile_head(method, args)
        if args.default_constructor:
            cfg = gpu_steps.load(method, 'coco', args)
            if cfg.optim_wrapper.get('constructor') and \
                    cfg.optim_wrapper.get('paramwise_cfg'):
                result['default_constructor'] = profile_head(
                    method, args, default_constructor=True)
        record['heads'][method] = result
        print(f'{method}: {result}', flush=True)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--methods', nargs='+', default=list(
        gpu_steps.METHODS), choices=list(gpu_steps.METHODS))
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--img-size', type=int, default=448)
    parser.add_argument('--iters', type=int, default=2,
                        help='profiled steps per head, after two of warm-up')
    parser.add_argument('--tiny', action='store_true',
                        help='a tiny ResNet-18 (smoke test)')
    parser.add_argument('--default-constructor', action='store_true',
                        help="profile the heads whose config has a "
                        "paramwise_cfg again under MMEngine's "
                        'DefaultOptimWrapperConstructor')
    parser.add_argument('--out', default=osp.join('work_dirs',
                                                  'head_profile'),
                        help='folder of head_profile.json and .md')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(0)
    record = dict(
        command=' '.join(['PYTHONPATH=.dev_scripts',
                          'python -m benchmark.head_profile',
                          *(sys.argv[1:] if argv is None else argv)]),
        environment=gpu_steps.environment(args), commit=commit(),
        device=args.device, tiny=args.tiny,
        settings={k: getattr(args, k)
                  for k in ('batch_size', 'img_size', 'iters')},
        heads={})
    profile_heads(args, record)
    os.makedirs(args.out, exist_ok=True)
    write_json(osp.join(args.out, 'head_profile.json'), record)
    text = page(record)
    with open(osp.join(args.out, 'head_profile.md'), 'w') as f:
        f.write(text)
    print(text)
    print(f'wrote {osp.join(args.out, "head_profile.json")} and '
          'head_profile.md beside it')
    return record


if __name__ == '__main__':
    main()
