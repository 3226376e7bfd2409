"""Images/s and peak memory of whole training iterations on a GPU.

Two tables, written with the device and the versions to ``gpu.md`` and
``gpu.json`` under ``--out`` (default ``work_dirs/speed_gpu``; the tracked
page: ``--out docs/results``; the json is rewritten after every row, so a
run stopped by ``--budget`` or killed keeps what it measured):

- ``heads``: one ``train_step`` (data preprocessor, ResNet-50, head, loss,
  backward, optimizer step; no data loading) of every method's head as its
  COCO config builds it, as a share of the same step with MMPretrain's
  ``MultiLabelLinearClsHead`` and sigmoid BCE, in fp32, fp16 and bf16
  (``tools/train.py --amp`` settings).
- ``recipe``: a whole training iteration with data loading (the config's
  loader) and without it (one loaded batch replayed), for MMPretrain's
  recipe as the configs inherit it, each switch of
  ``configs/_base_/runtime_gpu_fast.py`` alone, all of them
  (``gpu_fast``), and with them the input switches that the recipe leaves
  off (``gpu_fast_input``: an image cache of the training images, the flip
  on the device), per precision.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.speed_gpu --device cuda \\
        --data-root data/proxy-voc-448 --out docs/results
    # smoke test on CPU: tiny ResNet, 32 px, a generated demo dataset
    python -m benchmark.speed_gpu --device cpu --tiny
    # the page again from a json (e.g. one a GPU machine returned), with
    # the operators of every head's step
    # (.dev_scripts/benchmark/head_profile.py)
    python -m benchmark.speed_gpu --render docs/results/gpu.json \
        --op-profile docs/results/head_profile.json --out docs/results
"""
import argparse
import json
import os.path as osp
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import Runner

from spml_mm.datasets import make_demo_dataset
from spml_mm.engine import GPU_FAST_DEFAULTS, apply_gpu_fast
from benchmark.gpu_steps import (METHODS, PRECISIONS, build,
                                 environment, fresh, load, num_views,
                                 synthetic_batch, with_precision)
from benchmark.pages.gpu import render, write
from benchmark.common import code_fingerprint, commit

#: the recipe's switches, measured alone (``loader``: workers and
#: prefetching)
SWITCHES = ('channels_last', 'cudnn_benchmark', 'batched_copy', 'loader',
            'compile')
#: the input switches (off in the recipe), measured alone and with the
#: recipe (``gpu_fast_input``): the decoded images read from an image
#: cache of the training images, the flip on the device
INPUT_SWITCHES = ('image_cache', 'device_flip')


def with_switches(cfg: Config, precision: str, switches: List[str],
                  fast: bool, workers: Optional[int] = None,
                  cache: Optional[str] = None) -> Config:
    """The stock recipe in ``precision`` with ``switches`` of the fast
    recipe; ``fast``: the fast recipe's precision handling too (``amp``).
    ``workers`` replaces the recipe's number of loader workers; ``cache``
    is the image cache the ``image_cache`` switch reads."""
    on = dict.fromkeys(GPU_FAST_DEFAULTS, False)
    for switch in switches:
        if switch == 'loader':
            on.update(num_workers=workers or GPU_FAST_DEFAULTS['num_workers'],
                      prefetch_factor=GPU_FAST_DEFAULTS['prefetch_factor'])
        elif switch == 'image_cache':
            on['image_cache'] = cache
        else:
            on[switch] = GPU_FAST_DEFAULTS[switch] or True
    if fast:
        on['amp'] = PRECISIONS[precision]
    else:
        cfg = with_precision(cfg, precision)
    return apply_gpu_fast(Config(dict(cfg.to_dict(), gpu_fast=on)))


def timed(step: Callable[[dict], None], batches: Callable[[], dict],
          batch: int, args) -> Dict[str, Optional[float]]:
    """Median images/s over ``args.rounds`` rounds of ``args.iters``
    iterations after ``args.warmup`` (and each round's), and the peak
    memory (MiB, GPU only)."""
    cuda = args.device.startswith('cuda')

    def sync():
        if cuda:
            torch.cuda.synchronize()

    for _ in range(args.warmup):
        step(batches())
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    rates = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(args.iters):
            step(batches())
        sync()
        rates.append(batch * args.iters / (time.perf_counter() - start))
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    return dict(images_per_s=statistics.median(rates), peak_mib=peak,
                rounds=rates)


class BudgetSpent(Exception):
    """``--budget`` ran out before the next row."""


def check_budget(args) -> None:
    if args.deadline is not None and time.monotonic() > args.deadline:
        raise BudgetSpent


def measure_heads(args, results: dict, save: Callable[[], None]) -> None:
    """Fill ``results`` (precision -> method, and ``stock``, ->
    :func:`timed`), calling ``save`` after every row."""
    for precision in args.precisions:
        row = results.setdefault(precision, {})
        for method in ['stock'] + args.methods:
            if method in row:  # measured by the run --resume continues
                continue
            cfg = with_precision(load(method, 'coco', args), precision)
            views = num_views(cfg)
            torch.backends.cudnn.benchmark = False
            model, wrapper, step = build(cfg, args.device, args.batch_size)
            data = synthetic_batch(args.batch_size, args.img_size, 80, views)
            row[method] = timed(lambda d: step(d, wrapper),
                                lambda: fresh(data), args.batch_size, args)
            print(f'heads {precision} {method}: {row[method]}', flush=True)
            save()
            check_budget(args)
            del model, wrapper, step


def recipe_variants(args) -> Dict[str, List[str]]:
    """Variant of the recipe table -> its switches."""
    every = [s for s in SWITCHES if s != 'compile' or not args.no_compile]
    inputs = [s for s in INPUT_SWITCHES if s in args.switches]
    return {'stock': [],
            **{s: [s] for s in args.switches if s in every + inputs},
            'gpu_fast': every,
            **({'gpu_fast_input': every + inputs} if inputs else {})}


def train_image_cache(cfg: Config) -> str:
    """The image cache of ``cfg``'s training images (the pipeline's
    leading ``LoadImageFromFile`` and ``Resize``), written under the data
    root if missing (``tools/cache_images.py`` caches every loader's)."""
    from mmpretrain.registry import DATASETS

    from spml_mm.datasets.image_cache import (build_image_cache,
                                              cached_steps,
                                              default_cache_file)
    dataset_cfg = dict(cfg.train_dataloader.dataset, pipeline=[])
    dataset = DATASETS.build(dataset_cfg)
    paths = [dataset.get_data_info(i)['img_path']
             for i in range(len(dataset))]
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    out = default_cache_file(paths, steps, dataset_cfg['data_root'])
    if not osp.isfile(out):
        build_image_cache(paths, steps, out)
    return out


def tables_complete(args, record: dict) -> Dict[str, bool]:
    """Table -> whether every row of it the arguments ask for is in the
    record."""
    return dict(
        heads=all(m in record['heads'].get(p, {}) for p in args.precisions
                  for m in ['stock'] + args.methods),
        recipe=all(v in record['recipe'].get(f'{m} {p}', {})
                   for m in args.recipe_methods for p in args.precisions
                   for v in recipe_variants(args)))


def measure_recipe(args, results: dict, save: Callable[[], None]) -> None:
    """Fill ``results`` (``config precision`` -> variant -> ``loaded`` and
    ``replayed`` :func:`timed` results), calling ``save`` after every
    row."""
    init_default_scope('mmpretrain')  # the loader's dataset, built first
    variants = recipe_variants(args)
    for method in args.recipe_methods:
        for precision in args.precisions:
            row = results.setdefault(f'{method} {precision}', {})
            for name, switches in variants.items():
                if name in row:  # measured by the run --resume continues
                    continue
                cfg = load(method, 'voc', args)
                dataset = cfg.train_dataloader.dataset
                dataset.data_root = args.data_root
                if args.tiny:  # the demo dataset's layout
                    dataset.pop('data_prefix')
                    cfg.train_dataloader.num_workers = args.workers
                cache = train_image_cache(cfg) \
                    if 'image_cache' in switches else None
                cfg = with_switches(cfg, precision, switches,
                                    name.startswith('gpu_fast'),
                                    args.workers, cache)
                # whole batches only
                cfg.train_dataloader.drop_last = True
                torch.backends.cudnn.benchmark = bool(
                    cfg.get('env_cfg', {}).get('cudnn_benchmark'))
                loader = Runner.build_dataloader(cfg.train_dataloader,
                                                 seed=0)
                model, wrapper, step = build(cfg, args.device,
                                             len(loader.dataset))

                def forever():
                    while True:
                        yield from loader

                batches = forever()
                one = next(batches)
                row[name] = dict(
                    loaded=timed(lambda d: step(d, wrapper),
                                 lambda: next(batches), args.batch_size,
                                 args),
                    replayed=timed(lambda d: step(d, wrapper),
                                   lambda: fresh(one), args.batch_size,
                                   args))
                print(f'recipe {method} {precision} {name}: {row[name]}',
                      flush=True)
                save()
                check_budget(args)
                del model, wrapper, step, loader, batches


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--device', default='cuda',
                        help='cuda (default; needs a CUDA GPU) or cpu (with '
                        '--tiny: a smoke test)')
    parser.add_argument('--tables', nargs='+', default=['heads', 'recipe'],
                        choices=['heads', 'recipe'])
    parser.add_argument('--methods', nargs='+', default=list(METHODS),
                        choices=list(METHODS))
    parser.add_argument('--recipe-methods', nargs='+',
                        default=['stock', 'AN', 'GR'],
                        choices=['stock'] + list(METHODS),
                        help='heads of the recipe table (stock: '
                        "MMPretrain's)")
    parser.add_argument('--precisions', nargs='+', default=list(PRECISIONS),
                        choices=list(PRECISIONS))
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--img-size', type=int, default=448)
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--iters', type=int, default=20)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--data-root',
                        help='a dataset in the interchange format for the '
                        'recipe table, e.g. the VOC-like proxy written at '
                        '448 px (tools/make_proxy_data.py --like voc '
                        '--image-size 448); --tiny writes a demo dataset')
    parser.add_argument('--switches', nargs='+',
                        default=list(SWITCHES + INPUT_SWITCHES),
                        choices=SWITCHES + INPUT_SWITCHES,
                        help='the switches measured alone')
    parser.add_argument('--workers', type=int,
                        help='loader workers of the loader switch (default: '
                        "the recipe's); with --tiny, of every loader")
    parser.add_argument('--no-compile', action='store_true',
                        help='leave the compile switch out')
    parser.add_argument('--tiny', action='store_true',
                        help='a tiny ResNet-18 (smoke test)')
    parser.add_argument('--budget', type=float, metavar='SECONDS',
                        help='start no new row once this many seconds have '
                        'passed; the page says it is incomplete')
    parser.add_argument('--resume', metavar='JSON',
                        help='keep the rows of this json (an incomplete run '
                        'of this tool) and measure the others, if it was '
                        'measured on this device and versions with these '
                        'settings, of the same code (spml_mm and configs)')
    parser.add_argument('--render', metavar='JSON',
                        help='measure nothing: write the page of this json '
                        '(one this tool wrote) into --out')
    parser.add_argument('--op-profile', metavar='JSON',
                        help='a json of '
                        '.dev_scripts/benchmark/head_profile.py (the '
                        'operators of every head\'s step, from any machine), '
                        'rendered under the heads table; it stays in its own '
                        'file')
    parser.add_argument('--out', default=osp.join('work_dirs', 'speed_gpu'),
                        help='folder of gpu.md and gpu.json (default: '
                        'work_dirs/speed_gpu; the tracked page: '
                        'docs/results)')
    args = parser.parse_args(argv)
    if args.render:
        return args
    if 'recipe' in args.tables and not (args.data_root or args.tiny):
        parser.error('the recipe table reads a dataset: give --data-root')
    if args.device.startswith('cuda') and not torch.cuda.is_available():
        parser.error(f'--device {args.device}: torch {torch.__version__} '
                     'finds no CUDA GPU here; measure on a GPU machine, or '
                     'give --device cpu --tiny for a smoke test')
    return args


def main(argv=None):
    args = parse_args(argv)
    op_profile = None
    if args.op_profile:
        with open(args.op_profile) as f:
            op_profile = json.load(f)
    if args.render:
        with open(args.render) as f:
            record = json.load(f)
        write(record, args.out, op_profile)
        print(f'wrote {osp.join(args.out, "gpu.md")} from {args.render}')
        return record
    args.deadline = None if args.budget is None else \
        time.monotonic() + args.budget
    torch.manual_seed(0)
    record = dict(
        command=' '.join(['PYTHONPATH=.dev_scripts',
                          'python -m benchmark.speed_gpu',
                          *(sys.argv[1:] if argv is None else argv)]),
        environment=environment(args), commit=commit(),
        code=code_fingerprint(), device=args.device,
        tiny=args.tiny,
        settings={k: getattr(args, k) for k in
                  ('batch_size', 'img_size', 'warmup', 'iters', 'rounds')},
        heads={}, recipe={}, complete=False)

    if args.resume:
        with open(args.resume) as f:
            previous = json.load(f)
        # a table is of one machine and one version of the code
        same = {k: previous.get(k) == record[k]
                for k in ('environment', 'settings', 'tiny', 'code')}
        if all(same.values()):
            record.update(heads=previous['heads'], recipe=previous['recipe'])
            print(f'--resume: the rows of {args.resume} kept', flush=True)
        else:
            print(f'--resume: {args.resume} differs in '
                  f'{[k for k, v in same.items() if not v]}; measuring '
                  'every row', flush=True)

    def save():
        write(record, args.out, op_profile)

    with tempfile.TemporaryDirectory() as tmp:
        if 'recipe' in args.tables and not args.data_root:
            make_demo_dataset(tmp, num_train=4 * args.batch_size,
                              num_test=args.batch_size, seed=0)
            args.data_root = tmp
        try:
            if 'heads' in args.tables:
                measure_heads(args, record['heads'], save)
            if 'recipe' in args.tables:
                measure_recipe(args, record['recipe'], save)
        except BudgetSpent:
            print(f'--budget {args.budget:g} s spent: the page lists what '
                  'was measured', flush=True)
        record['tables_complete'] = tables_complete(args, record)
        record['complete'] = all(record['tables_complete'][t]
                                 for t in args.tables)
    save()
    print(render(record, op_profile))
    print(f'wrote {osp.join(args.out, "gpu.md")} and gpu.json beside it')
    return record


if __name__ == '__main__':
    main()
