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
  ``configs/_base_/runtime_gpu_fast.py`` alone, and all of them
  (``gpu_fast``), per precision.

Example:
    python -m tools.benchmark.speed_gpu --device cuda \\
        --data-root data/proxy-voc-448 --out docs/results
    # smoke test on CPU: tiny ResNet, 32 px, a generated demo dataset
    python -m tools.benchmark.speed_gpu --device cpu --tiny
    # the page again from a json (e.g. one a GPU machine returned), with
    # the operators of every head's step (tools/benchmark/head_profile.py)
    python -m tools.benchmark.speed_gpu --render docs/results/gpu.json \
        --op-profile docs/results/head_profile.json --out docs/results
"""
import argparse
import copy
import json
import os
import os.path as osp
import platform
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import mmengine
import mmpretrain
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmengine.runner import Runner
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm
from spml_mm.datasets import make_demo_dataset
from spml_mm.engine import GPU_FAST_DEFAULTS, apply_gpu_fast
from tools.benchmark import head_profile
from tools.benchmark.spml_setups import start_schedules
from tools.common import REPO, code_fingerprint, commit, write_json

#: method -> the folder of its ResNet-50 configs
METHODS = {
    'AN': 'an', 'EM': 'em', 'EM + APL': 'em_apl', 'EPR': 'epr',
    'GR': 'grloss', 'LL-Cp': 'll_cp', 'LL-Ct': 'll_ct', 'LL-R': 'll_r',
    'OPML-SP': 'opml', 'ROLE': 'role', 'VLPL': 'vlpl', 'AEVLP': 'aevlp',
    'LASD': 'lasd'
}
#: precision -> AMP dtype (None: fp32)
PRECISIONS = {'fp32': None, 'fp16': 'float16', 'bf16': 'bfloat16'}
#: the recipe's switches, measured alone (``loader``: workers and
#: prefetching)
SWITCHES = ('channels_last', 'cudnn_benchmark', 'batched_copy', 'loader',
            'compile')
#: the targets: every head's images/s as a share of the stock head's; the
#: fast recipe's speed-up with data loading
HEAD_TARGET = 0.97
RECIPE_TARGET = 2.
STOCK_HEAD = dict(type='MultiLabelLinearClsHead',
                  loss=dict(type='CrossEntropyLoss', use_sigmoid=True))
TINY_BACKBONE = dict(type='ResNet', depth=18, stem_channels=8,
                     base_channels=8, out_indices=(3, ))


def load(method: str, dataset: str, args) -> Config:
    cfg = Config.fromfile(
        osp.join(REPO, 'configs', METHODS[method], f'resnet50_{dataset}.py'))
    cfg.train_dataloader.batch_size = args.batch_size
    for step in cfg.train_dataloader.dataset.pipeline:
        if step['type'] in ('Resize', 'RandomResizedCrop'):
            step['scale'] = args.img_size if step['type'] != 'Resize' \
                else (args.img_size, args.img_size)
    if args.tiny:
        cfg.model.backbone = TINY_BACKBONE
        cfg.model.head.in_channels = 64
    return cfg


def with_precision(cfg: Config, precision: str) -> Config:
    """The config as ``tools/train.py --amp`` (and ``--cfg-options
    optim_wrapper.dtype=bfloat16``) trains it."""
    cfg = copy.deepcopy(cfg)
    if PRECISIONS[precision]:
        cfg.optim_wrapper.update(type='AmpOptimWrapper', loss_scale='dynamic',
                                 dtype=PRECISIONS[precision])
    return cfg


def with_switches(cfg: Config, precision: str, switches: List[str],
                  fast: bool, workers: Optional[int] = None) -> Config:
    """The stock recipe in ``precision`` with ``switches`` of the fast
    recipe; ``fast``: the fast recipe's precision handling too (``amp``).
    ``workers`` replaces the recipe's number of loader workers."""
    on = dict.fromkeys(GPU_FAST_DEFAULTS, False)
    for switch in switches:
        if switch == 'loader':
            on.update(num_workers=workers or GPU_FAST_DEFAULTS['num_workers'],
                      prefetch_factor=GPU_FAST_DEFAULTS['prefetch_factor'])
        else:
            on[switch] = GPU_FAST_DEFAULTS[switch] or True
    if fast:
        on['amp'] = PRECISIONS[precision]
    else:
        cfg = with_precision(cfg, precision)
    return apply_gpu_fast(Config(dict(cfg.to_dict(), gpu_fast=on)))


def build(cfg: Config, device: str, num_samples: int):
    """Model, optimizer wrapper and the train step (compiled as MMEngine
    compiles it) of a config, on ``device``."""
    init_default_scope('mmpretrain')
    model_cfg = copy.deepcopy(cfg.model)
    model_cfg.setdefault('data_preprocessor', cfg.get('data_preprocessor'))
    model = MODELS.build(model_cfg)
    bank = getattr(model.head, 'label_bank', None)
    if bank is not None:
        bank.allocate(num_samples)
    start_schedules(model, cfg, epoch=2)
    model = model.to(device).train()
    if cfg.get('gpu_fast', {}).get('channels_last'):
        model = model.to(memory_format=torch.channels_last)
    wrapper = build_optim_wrapper(model, copy.deepcopy(cfg.optim_wrapper))
    step = model.train_step
    if cfg.get('compile'):
        step = torch.compile(step, **({} if cfg.compile is True else
                                      cfg.compile))
    return model, wrapper, step


def synthetic_batch(batch: int, size: int, num_classes: int,
                    num_views: int) -> dict:
    """A pseudo-collated batch of uint8 images with one positive each."""
    g = torch.Generator().manual_seed(0)

    def images():
        return [torch.randint(0, 256, (3, size, size), dtype=torch.uint8,
                              generator=g) for _ in range(batch)]

    samples = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label(
            [int(torch.randint(num_classes, (), generator=g))])
        for i in range(batch)
    ]
    inputs = images() if num_views == 1 else [images()
                                             for _ in range(num_views)]
    return dict(inputs=inputs, data_samples=samples)


def fresh(data: dict) -> dict:
    """The batch with new data samples (the preprocessor writes labels into
    them), sharing the host images."""
    return dict(data, data_samples=[s.new() for s in data['data_samples']])


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
            cfg = with_precision(
                load('AN' if method == 'stock' else method, 'coco', args),
                precision)
            views = 3 if cfg.data_preprocessor.get('type') == \
                'MultiViewDataPreprocessor' else 1
            if method == 'stock':
                cfg.model.head = dict(STOCK_HEAD, num_classes=80,
                                      in_channels=cfg.model.head.in_channels)
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
    return {'stock': [], **{s: [s] for s in args.switches if s in every},
            'gpu_fast': every}


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
    variants = recipe_variants(args)
    for method in args.recipe_methods:
        for precision in args.precisions:
            row = results.setdefault(f'{method} {precision}', {})
            for name, switches in variants.items():
                if name in row:  # measured by the run --resume continues
                    continue
                cfg = load('AN' if method == 'stock' else method, 'voc',
                           args)
                if method == 'stock':
                    cfg.model.head = dict(
                        STOCK_HEAD, num_classes=20,
                        in_channels=cfg.model.head.in_channels)
                dataset = cfg.train_dataloader.dataset
                dataset.data_root = args.data_root
                if args.tiny:  # the demo dataset's layout
                    dataset.pop('data_prefix')
                    cfg.train_dataloader.num_workers = args.workers
                cfg = with_switches(cfg, precision, switches,
                                    name == 'gpu_fast', args.workers)
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


def environment(args) -> str:
    if args.device.startswith('cuda'):
        device = (f'{torch.cuda.get_device_name()}, CUDA '
                  f'{torch.version.cuda}, cuDNN '
                  f'{torch.backends.cudnn.version()}')
    else:
        device = f'CPU ({platform.processor() or platform.machine()}, ' \
            f'{torch.get_num_threads()} threads)'
    return (f'{device}; torch {torch.__version__}, mmengine '
            f'{mmengine.__version__}, mmpretrain {mmpretrain.__version__}, '
            f'spml-mm {spml_mm.__version__}')


def fmt_memory(result: dict) -> str:
    return '-' if result['peak_mib'] is None else \
        f"{result['peak_mib']:,.0f}"


def render(record: dict, op_profile: Optional[dict] = None) -> str:
    """The page of a results record (:func:`main`'s json), with the section
    of ``op_profile`` (a ``head_profile.py`` json, kept in its own file and
    labelled with its own machine and commit) under the heads table."""
    heads, recipe, settings = (record['heads'], record['recipe'],
                               record['settings'])
    lines = [
        '# Training speed on a GPU', '',
        f"Measured with `{record['command']}` on {record['environment']}. "
        f"Batch {settings['batch_size']}, {settings['img_size']} px, median "
        f"of {settings['rounds']} rounds of {settings['iters']} iterations "
        f"after {settings['warmup']} of warm-up.", ''
    ]
    if not record['complete']:
        lines += ['**Incomplete**: the run ended (its `--budget` spent) '
                  'before the rows below were all measured.', '']
    heads = {p: row for p, row in heads.items() if 'stock' in row}
    if heads:
        methods = list(dict.fromkeys(
            m for row in heads.values() for m in row if m != 'stock'))
        lines += [
            '## Every head against MMPretrain\'s', '',
            'A whole `train_step` without data loading: images/s of the '
            'step with each method\'s head as a share of the step with '
            "MMPretrain's `MultiLabelLinearClsHead` and sigmoid BCE on the "
            'same ResNet-50; peak memory in MiB (LASD: three views of each '
            f'image; images/s counts samples). Target: {HEAD_TARGET} or '
            'more.', '',
            '| precision | stock img/s | ' + ' | '.join(methods) +
            ' | stock MiB | peak MiB (max over heads) |',
            '| --- ' * (len(methods) + 4) + '|'
        ]
        missed, below = [], []
        for precision, row in heads.items():
            stock = row['stock']['images_per_s']
            shares = {m: row[m]['images_per_s'] / stock for m in methods
                      if m in row}
            missed += [f'{m} {precision} {share:.3f} '
                       f'({HEAD_TARGET - share:.3f} short)'
                       for m, share in shares.items() if share < HEAD_TARGET]
            below += [m for m, share in shares.items() if share < HEAD_TARGET]
            cells = ' | '.join(f'{shares[m]:.3f}' if m in shares else '-'
                               for m in methods)
            peak = [row[m]['peak_mib'] for m in shares
                    if row[m]['peak_mib'] is not None]
            lines.append(
                f'| {precision} | {stock:.1f} | {cells} | '
                f"{fmt_memory(row['stock'])} | "
                f"{f'{max(peak):,.0f}' if peak else '-'} |")
        lines += ['', 'Below the target: ' + ('; '.join(missed) or 'none')
                  + '.', '']
        spread = {p: max(max(r['rounds']) / min(r['rounds']) - 1
                         for r in row.values() if r.get('rounds'))
                  for p, row in heads.items()
                  if any(r.get('rounds') for r in row.values())}
        if spread:
            lines += ["The rounds' spread (a row's fastest round against "
                      'its slowest, the most in each precision): ' +
                      '; '.join(f'{p} {v:.1%}' for p, v in spread.items())
                      + '; a share nearer 1 than that is within the '
                      "measurement's noise.", '']
        if op_profile:
            timed_at = record.get('commit') or 'not recorded'
            if timed_at != op_profile.get('commit'):
                lines += [
                    'The timings above and the operators below are of '
                    f'different code: the timings of spml-mm commit '
                    f"{timed_at}, the operators of commit "
                    f"{op_profile.get('commit') or 'unknown'}.", ''
                ]
            lines.append(head_profile.render(op_profile, below))
    recipe = {k: row for k, row in recipe.items() if 'stock' in row}
    if recipe:
        lines += [
            '## The fast recipe and each of its switches', '',
            'Images/s of a whole training iteration with data loading '
            '(the config\'s loader) and without it (one loaded batch '
            'replayed), MMPretrain\'s recipe as the configs inherit it '
            '(`stock`), each switch of `configs/_base_/runtime_gpu_fast.py` '
            'alone, and all of them (`gpu_fast`); speed-up against stock '
            f'with data loading. Target: `gpu_fast` {RECIPE_TARGET:g}x or '
            'more.', '',
            '| config and precision | variant | img/s with data | '
            'img/s without | speed-up | peak MiB |',
            '| --- | --- | --- | --- | --- | --- |'
        ]
        missed = []
        for key, row in recipe.items():
            stock = row['stock']['loaded']['images_per_s']
            for name, result in row.items():
                loaded = result['loaded']['images_per_s']
                if name == 'gpu_fast' and loaded / stock < RECIPE_TARGET:
                    missed.append(f'{key} {loaded / stock:.2f}x '
                                  f'({RECIPE_TARGET - loaded / stock:.2f} '
                                  'short; ' + why(result, stock) + ')')
                lines.append(
                    f'| {key} | {name} | {loaded:.1f} | '
                    f"{result['replayed']['images_per_s']:.1f} | "
                    f'{loaded / stock:.2f} | '
                    f"{fmt_memory(result['replayed'])} |")
        measured = any('gpu_fast' in row for row in recipe.values())
        lines += ['', '`gpu_fast` below the target: ' +
                  ('; '.join(missed) or 'none') + '.' if measured else
                  '`gpu_fast` is not measured yet.', '']
    return '\n'.join(lines)

def why(result: dict, stock: float) -> str:
    """What bounds a recipe row: the loader where it gives much less than
    the step alone takes, else the step."""
    loaded = result['loaded']['images_per_s']
    replayed = result['replayed']['images_per_s']
    if loaded < 0.8 * replayed:
        return (f'the loader: the step alone runs at {replayed / stock:.2f}x'
                f', the loader feeds {loaded / replayed:.0%} of it')
    return (f'the step: without data loading {replayed / stock:.2f}x, the '
            f'loader feeds {loaded / replayed:.0%} of it')


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
    parser.add_argument('--switches', nargs='+', default=list(SWITCHES),
                        choices=SWITCHES,
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
                        help='a json of tools/benchmark/head_profile.py '
                        '(the operators of every head\'s step, from any '
                        'machine), rendered under the heads table; it stays '
                        'in its own file')
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


def write(record: dict, out: str, op_profile: Optional[dict] = None) -> None:
    """``gpu.json`` (written to a temporary file and renamed) and
    ``gpu.md`` (with ``op_profile``'s section, :func:`render`) under
    ``out``."""
    os.makedirs(out, exist_ok=True)
    write_json(osp.join(out, 'gpu.json'), record)
    with open(osp.join(out, 'gpu.md'), 'w') as f:
        f.write(render(record, op_profile))


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
        command=' '.join(['python -m tools.benchmark.speed_gpu',
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
