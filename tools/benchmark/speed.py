"""Cost of the SPML losses, head and label bank against MMPretrain's own.

Everything is measured in one process, on the CPU:

1. Forward + backward of every method's loss on (64 x 80), (64 x 312) and
   (256 x 600) logits, with the hyperparameters of its ResNet-50 COCO and CUB
   configs (every ``configs/*/resnet50*_{coco,cub}.py``; COCO's at 600
   classes), as a ratio to MMPretrain's
   ``CrossEntropyLoss(use_sigmoid=True)``. The losses and the reference run
   in interleaved rounds; the ratio is the median of the rounds' ratios.
   Label-bank entries come from running the config's update rule on random
   scores; LASD also gets its consistency term over its three views.
2. One training iteration (data preprocessor, backbone, neck, head, loss,
   backward, optimizer step; no data loading) of ``SPMLLinearClsHead``
   against MMPretrain's ``MultiLabelLinearClsHead`` with the same ResNet-50,
   and each method's head (forward, loss, backward, label-bank lookup) as a
   share of that iteration.
3. The label-bank update after a scoring pass (``update_in_blocks``: gather,
   update rule, diagnostics) of every pseudo-labeling config at COCO and
   NUS-WIDE scale. ``tools/benchmark/label_bank.py`` breaks it down further
   and times the scoring pass itself.

Peak memory is the highest CPU memory allocated by torch above the start of
each measured call (PyTorch profiler's allocation events). Targets: every
loss within its ratio of ``LOSS_TARGETS``, the head's share of an iteration
under 5%.
Writes ``docs/results/speed.md`` and re-renders ``docs/RESULTS.md``.

Example:
    python tools/benchmark/speed.py --threads 1
    python tools/benchmark/speed.py --quick --out-dir /tmp/speed   # smoke
"""
import argparse
import copy
import glob
import os
import os.path as osp
import statistics
import sys
import time
from typing import Callable, Dict, List, Optional

# the profiler's kineto backend logs to stderr at every start otherwise
os.environ.setdefault('KINETO_LOG_LEVEL', '5')

import torch  # noqa: E402
from mmengine.config import Config  # noqa: E402
from mmengine.optim import build_optim_wrapper  # noqa: E402
from mmengine.utils import ProgressBar  # noqa: E402
from mmpretrain.registry import MODELS  # noqa: E402
from mmpretrain.structures import DataSample  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path.insert(0, REPO)
sys.path.insert(0, osp.join(REPO, 'tools', 'benchmark'))
sys.path.insert(0, osp.join(REPO, 'tools', 'analysis'))
from label_bank import SIZES  # noqa: E402
from loading import build_model  # noqa: E402
from results_page import machine_summary, render_results_page  # noqa: E402

from spml_mm.models.label_bank_scoring import \
    update_in_blocks  # noqa: E402
from spml_mm.models.data_preprocessors import split_views  # noqa: E402
from spml_mm.models.label_bank import LabelBank  # noqa: E402

#: method folder (and config variant) -> name in the tables; OPML's
#: ResNet-50 configs are the full OPML-SP recipe
LABELS = {
    'an': 'AN',
    'grloss': 'GR',
    'em': 'EM',
    'em_apl': 'EM + APL',
    'lasd': 'LASD',
    'opml': 'OPML-SP',
}
#: logits shapes of the loss table and the configs their settings come from
#: (256 x 600: the COCO settings at an OpenImages-like number of classes)
LOSS_SHAPES = {(64, 80): 'coco', (64, 312): 'cub', (256, 600): 'coco'}
#: the largest ratio to the reference each loss may take, per shape
LOSS_TARGETS = {
    'AN': (1.1, 1.1, 1.1),
    'EM': (1.5, 1.5, 1.5),
    'EM + APL': (2.0, 2.0, 2.3),
    'GR': (2.0, 2.5, 2.5),
    'LASD': (3.0, 3.0, 4.5),
    'OPML-SP': (4.0, 5.0, 7.5),
}
ITERATION_CONFIG = 'configs/an/resnet50_coco.py'
REFERENCE = dict(type='CrossEntropyLoss', use_sigmoid=True)
REFERENCE_NAME = "MMPretrain CrossEntropyLoss(use_sigmoid=True)"
HEAD_SHARE_TARGET = 0.05


def method_configs(dataset: str) -> Dict[str, str]:
    """Every method's ResNet-50 config of a dataset, by table name."""
    found = {}
    for path in sorted(glob.glob(
            osp.join(REPO, 'configs', '*', f'resnet50*_{dataset}.py'))):
        method = osp.basename(osp.dirname(path))
        variant = osp.basename(path)[len('resnet50'):-len(f'_{dataset}.py')]
        found[LABELS.get(method + variant,
                         method + variant)] = osp.relpath(path, REPO)
    return found


def load(path: str) -> Config:
    return Config.fromfile(osp.join(REPO, path))


def pseudo_label_hook(cfg: Config) -> Optional[dict]:
    hooks = [h for h in [*(cfg.get('default_hooks') or {}).values(),
                         *cfg.get('custom_hooks', [])]
             if h and h['type'] == 'SPMLPseudoLabelHook']
    return hooks[0] if hooks else None


def num_views(cfg: Config) -> int:
    for step in cfg.train_dataloader.dataset.pipeline:
        if step['type'] == 'MultiView':
            views = step['num_views']
            return sum(views) if isinstance(views, (list, tuple)) else views
    return 1


def one_positive(batch: int, num_classes: int,
                 generator: torch.Generator) -> torch.Tensor:
    target = torch.zeros(batch, num_classes)
    target[torch.arange(batch),
           torch.randint(num_classes, (batch, ), generator=generator)] = 1
    return target


def samples_of(target: torch.Tensor) -> List[DataSample]:
    samples = []
    for idx, row in enumerate(target):
        sample = DataSample(metainfo=dict(sample_idx=idx))
        samples.append(sample.set_gt_label(row.nonzero()[:, 0]))
    return samples


def trained_bank(cfg: Config, target: torch.Tensor,
                 generator: torch.Generator) -> LabelBank:
    """The head's label bank after every update of a run, on random scores
    of the rows of ``target``."""
    head = cfg.model.head
    bank = MODELS.build(head.label_bank,
                        default_args=dict(num_classes=head.num_classes))
    bank.allocate(len(target))
    hook = pseudo_label_hook(cfg)
    updater = MODELS.build(hook['updater'])
    scores = torch.rand(target.shape, generator=generator)
    max_epochs, warmup = cfg.train_cfg.max_epochs, hook['warmup_epochs']
    for epoch in range(warmup, max_epochs):
        updater.update(bank, scores, target.bool(), epoch, max_epochs, warmup)
    return bank


def start_schedules(module: torch.nn.Module, cfg: Config) -> None:
    """What SPMLEpochHook does before the first epoch."""
    for m in module.modules():
        if callable(getattr(m, 'set_epoch', None)):
            m.set_epoch(0, cfg.train_cfg.max_epochs)


def loss_step(cfg: Optional[Config], batch: int, num_classes: int,
              seed: int = 0) -> Callable[[], None]:
    """Forward + backward of a config's loss (None: the reference BCE)."""
    g = torch.Generator().manual_seed(seed)
    target = one_positive(batch, num_classes, g)
    if cfg is not None and cfg.model.head.num_classes != num_classes:
        cfg = copy.deepcopy(cfg)
        cfg.model.head.num_classes = num_classes
        if 'num_classes' in cfg.model.head.loss:
            cfg.model.head.loss.num_classes = num_classes
    views, kwargs, consistency = 1, {}, None
    if cfg is None:
        loss = MODELS.build(REFERENCE)
    else:
        head = cfg.model.head
        loss = MODELS.build(head.loss)
        start_schedules(loss, cfg)
        if head.get('label_bank'):
            kwargs = trained_bank(cfg, target, g).entries(samples_of(target))
        if head.get('consistency'):
            consistency = MODELS.build(head.consistency)
            views = num_views(cfg)
    logits = torch.randn(views * batch, num_classes, generator=g) * 3

    def step():
        scores = logits.detach().requires_grad_()
        view_scores = split_views(scores, batch)
        value = loss(view_scores[0], target, **kwargs)
        if consistency is not None:
            value = value + consistency(view_scores)
        value.backward()

    return step


def profile_call(fn: Callable[[], None]) -> Dict[str, int]:
    """Peak memory and op count of one call of ``fn``.

    Returns:
        dict: ``memory``, the peak bytes allocated by torch on the CPU during
        the call above what was allocated when it started, and ``ops``, the
        number of ATen operators it dispatched (those not called by another
        ATen operator; autograd's backward functions included).
    """
    with profile(activities=[ProfilerActivity.CPU],
                 profile_memory=True) as prof:
        fn()
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == '[memory]')
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    ops = sum(
        e.name.startswith('aten::') and
        not (e.cpu_parent and e.cpu_parent.name.startswith('aten::'))
        for e in prof.events())
    return dict(memory=peak, ops=ops)


def costliest_operator(fn: Callable[[], None], calls: int = 20) -> str:
    """The ATen operator with the most own CPU time over ``calls`` calls of
    ``fn``, and its share of their total.

    An operator's time is the median of its calls times their number, so
    that a call preempted by another process does not make it the costliest.
    """
    times: Dict[str, List[float]] = {}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            fn()
    for event in prof.events():
        if event.name.startswith('aten::'):
            times.setdefault(event.name, []).append(
                event.self_cpu_time_total)
    cost = {k: statistics.median(v) * len(v) for k, v in times.items()}
    top = max(cost, key=cost.get)
    share = 100 * cost[top] / sum(cost.values())
    return f'{top[len("aten::"):]} ({share:.0f}%)'


def clock() -> Callable[[], float]:
    """The timer: with one torch thread every op runs in the calling
    thread, so its CPU time (``time.thread_time``) is the cost of the work,
    free of the time other processes of a shared machine take; with more
    threads, wall-clock time (``time.perf_counter``)."""
    return time.thread_time if torch.get_num_threads() == 1 \
        else time.perf_counter


def calls_per_round(fn: Callable[[], None], seconds: float) -> int:
    """How many calls of ``fn`` take about ``seconds``."""
    timer = clock()
    fn()
    start = timer()
    fn()
    once = max(timer() - start, 1e-7)
    return max(1, int(seconds / once))


def interleaved(fns: Dict[str, Callable[[], None]], reference: str,
                rounds: int, seconds: float,
                progress: Optional[ProgressBar] = None) -> Dict[str, dict]:
    """Time every function against ``reference`` in interleaved rounds.

    Each round times every function once (about ``seconds`` of calls each,
    the order rotating between rounds), so a slow-down of the machine hits
    all of them alike.

    Returns:
        dict: Per function the median time per call in seconds (``time``)
        and the median over rounds of its time over the reference's in the
        same round (``ratio``).
    """
    timer = clock()
    calls = {name: calls_per_round(fn, seconds) for name, fn in fns.items()}
    times = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = timer()
            for _ in range(calls[name]):
                fns[name]()
            times[name].append((timer() - start) / calls[name])
        if progress is not None:
            progress.update()
    return {
        name: dict(
            time=statistics.median(t),
            ratio=statistics.median(
                a / b for a, b in zip(t, times[reference])))
        for name, t in times.items()
    }


def measure_losses(rounds: int, progress: ProgressBar) -> Dict:
    """Loss table: per shape, name -> time, ratio, peak memory."""
    results = {}
    for (batch, num_classes), dataset in LOSS_SHAPES.items():
        fns = {REFERENCE_NAME: loss_step(None, batch, num_classes)}
        for name, path in method_configs(dataset).items():
            fns[name] = loss_step(load(path), batch, num_classes)
        timed = interleaved(fns, REFERENCE_NAME, rounds, 0.02, progress)
        for name, fn in fns.items():
            timed[name].update(profile_call(fn),
                               costliest=costliest_operator(fn))
        results[(batch, num_classes)] = timed
    return results


def iteration_models(batch: int, size: int):
    """SPMLLinearClsHead and MultiLabelLinearClsHead models with the same
    ResNet-50 weights, their optimizers and a synthetic batch."""
    cfg = load(ITERATION_CONFIG)
    spml = build_model(cfg)
    mm_cfg = copy.deepcopy(cfg)
    mm_cfg.model.head = dict(
        type='MultiLabelLinearClsHead',
        num_classes=cfg.model.head.num_classes,
        in_channels=cfg.model.head.in_channels,
        loss=REFERENCE)
    mm = build_model(mm_cfg)
    mm.load_state_dict(spml.state_dict())
    g = torch.Generator().manual_seed(0)
    target = one_positive(batch, cfg.model.head.num_classes, g)
    data = dict(
        inputs=[
            torch.randint(0, 256, (3, size, size), dtype=torch.uint8,
                          generator=g) for _ in range(batch)
        ],
        data_samples=samples_of(target))
    models = {}
    for name, model in (('SPMLLinearClsHead + ANLoss', spml),
                        ('MMPretrain MultiLabelLinearClsHead + BCE', mm)):
        model.train()
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        models[name] = (model, wrapper)
    return models, data


def head_step(cfg: Config, batch: int, seed: int = 0) -> Callable[[], None]:
    """Forward, loss and backward of a config's head on fixed features."""
    head_cfg = copy.deepcopy(cfg.model.head)
    head = MODELS.build(head_cfg)
    head.train()
    start_schedules(head, cfg)
    g = torch.Generator().manual_seed(seed)
    target = one_positive(batch, head_cfg.num_classes, g)
    samples = samples_of(target)
    if getattr(head, 'label_bank', None) is not None:
        head.label_bank = trained_bank(cfg, target, g)
    feats = torch.randn(num_views(cfg) * batch, head_cfg.in_channels,
                        generator=g)

    def step():
        head.zero_grad(set_to_none=True)
        inputs = feats.detach().requires_grad_()
        losses = head.loss((inputs, ), samples)
        sum(losses.values()).backward()

    return step


def measure_iteration(batch: int, size: int, rounds: int,
                      progress: ProgressBar) -> Dict:
    models, data = iteration_models(batch, size)
    fns = {
        name: (lambda m=model, w=wrapper: m.train_step(data, w))
        for name, (model, wrapper) in models.items()
    }
    reference = list(fns)[1]
    iteration = interleaved(fns, reference, rounds, 0., progress)
    for name, fn in fns.items():
        iteration[name].update(profile_call(fn))
    # heads alone, on features of the iteration's batch size
    heads = {
        name: head_step(load(path), batch)
        for name, path in method_configs('coco').items()
    }
    mm_head = models[reference][0].head
    feats = torch.randn(batch, mm_head.fc.in_features)

    def mm_head_step():
        mm_head.zero_grad(set_to_none=True)
        inputs = feats.detach().requires_grad_()
        mm_head.loss((inputs, ), data['data_samples'])['loss'].backward()

    heads[reference] = mm_head_step
    head_times = interleaved(heads, reference, rounds * 4, 0.02, progress)
    spml_iter = iteration[list(fns)[0]]['time']
    for name, timed in head_times.items():
        timed['share'] = timed['time'] / (
            iteration[reference]['time'] if name == reference else spml_iter)
    return dict(iteration=iteration, heads=head_times)


def measure_banks(scale: float, repeats: int, progress: ProgressBar) -> List:
    """The hook's bank update of every pseudo-labeling config."""
    rows = []
    configs = {
        name: load(path)
        for name, path in method_configs('coco').items()
    }
    configs = {n: c for n, c in configs.items() if pseudo_label_hook(c)}
    for dataset, (num_samples, num_classes) in SIZES.items():
        num_samples = int(num_samples * scale)
        g = torch.Generator().manual_seed(0)
        observed = one_positive(num_samples, num_classes, g).bool()
        scores = torch.rand(num_samples, num_classes, generator=g)
        full = observed | (torch.rand(num_samples, num_classes,
                                      generator=g) < 0.02)
        # one rank's scored batches of 64, as the hook records them
        records = [(torch.arange(i, min(i + 64, num_samples)),
                    scores[i:i + 64], observed[i:i + 64], full[i:i + 64])
                   for i in range(0, num_samples, 64)]
        for name, cfg in configs.items():
            hook = pseudo_label_hook(cfg)
            updater = MODELS.build(hook['updater'])
            max_epochs, warmup = cfg.train_cfg.max_epochs, hook[
                'warmup_epochs']

            def update(bank):
                update_in_blocks(bank, records, updater, warmup, max_epochs,
                                 warmup, hook.get('max_gather_mb', 256.))

            def fresh_bank():
                bank = MODELS.build(
                    cfg.model.head.label_bank,
                    default_args=dict(num_classes=num_classes))
                bank.allocate(num_samples)
                return bank

            times, timer = [], clock()
            for _ in range(repeats):
                bank = fresh_bank()
                start = timer()
                update(bank)
                times.append(timer() - start)
                progress.update()
            bank = fresh_bank()
            rows.append(
                dict(
                    name=name,
                    matrix=f'{dataset} {num_samples:,} x {num_classes}',
                    time=statistics.median(times),
                    memory=profile_call(lambda: update(bank))['memory'],
                    storage=sum(b.numel() * b.element_size()
                                for b in bank.buffers())))
    return rows


def shapes_text(losses) -> List[str]:
    return [f'{b} x {c}' for b, c in losses]


def mb(nbytes: float) -> str:
    return f'{nbytes / 2**20:.2f}'


def report(losses, iteration, banks, args, command) -> str:
    threads = torch.get_num_threads()
    timer = ('the thread\'s CPU time (`time.thread_time`)' if clock() is
             time.thread_time else 'wall-clock time')
    lines = [
        f'CPU, {threads} torch thread{"s" * (threads > 1)}, timed by '
        f'{timer}; times are medians of interleaved rounds, ratios are '
        'medians of per-round ratios to the reference measured in the same '
        'process.', '',
        '### Loss forward + backward against '
        f'{REFERENCE_NAME}', '',
        'Hyperparameters of each method\'s ResNet-50 COCO (80 classes) and '
        'CUB (312 classes) config, and the COCO config at 600 classes; '
        'EM + APL and OPML-SP with their label bank filled by the config\'s '
        'update rule, LASD with its consistency term over 3 views (3 x B '
        'logits). "ops": ATen operators one forward + backward dispatches; '
        f'the costliest of them at {shapes_text(losses)[-1]} and its share '
        'of the CPU time of all. Each ratio is followed by its target in '
        'parentheses.', ''
    ]
    shapes = list(losses)
    header = '| loss | ' + ' | '.join(
        f'{b} x {c}: ratio (target) | time (us) | peak memory (MB)'
        for b, c in shapes) + ' | ops | costliest op | targets met |'
    lines += [header, '| --- ' * (4 + 3 * len(shapes)) + '|']
    missed_losses = []
    for name in losses[shapes[0]]:
        cells, ok = [], True
        for shape, target in zip(shapes, LOSS_TARGETS.get(name, [None] * 3)):
            row = losses[shape].get(name)
            if row is None:
                cells.append('- | - | -')
                continue
            ok &= target is None or row['ratio'] <= target
            bound = '' if target is None else f' ({target:g})'
            cells.append(f'{row["ratio"]:.2f}{bound} | '
                         f'{1e6 * row["time"]:.0f} | {mb(row["memory"])}')
        if not ok:
            missed_losses.append(name)
        verdict = '-' if name == REFERENCE_NAME else 'yes' if ok else '**no**'
        ops = losses[shapes[0]][name]['ops']
        costliest = losses[shapes[-1]][name]['costliest']
        lines.append(f'| {name} | ' + ' | '.join(cells) +
                     f' | {ops} | {costliest} | {verdict} |')

    it, heads = iteration['iteration'], iteration['heads']
    names = list(it)
    lines += [
        '', f'### Training iteration, ResNet-50, {args.img_size} px, batch '
        f'{args.batch_size}', '',
        'Data preprocessor, backbone, neck, head, loss, backward and Adam '
        f'step of `{ITERATION_CONFIG}` (`model.train_step`; data loading not '
        'included), against the same model with MMPretrain\'s '
        'MultiLabelLinearClsHead and BCE.', '',
        '| model | iteration (s) | ratio | peak memory (MB) |',
        '| --- | --- | --- | --- |'
    ]
    for name in names:
        lines.append(f'| {name} | {it[name]["time"]:.3f} | '
                     f'{it[name]["ratio"]:.3f} | {mb(it[name]["memory"])} |')
    lines += [
        '', 'Each head alone (forward, label-bank lookup, loss, backward, on '
        'fixed features; LASD on its 3 views) and its share of the '
        'iteration above (of the SPML iteration for the SPML heads; LASD\'s '
        'own iteration runs 3 views through the backbone, so its real share '
        'is lower):', '', '| head | time (ms) | share of the iteration | '
        'under 5% |', '| --- | --- | --- | --- |'
    ]
    missed_heads = []
    for name, row in heads.items():
        ok = row['share'] < HEAD_SHARE_TARGET
        if not ok:
            missed_heads.append(name)
        lines.append(f'| {name} | {1e3 * row["time"]:.2f} | '
                     f'{100 * row["share"]:.2f}% | '
                     f'{"yes" if ok else "**no**"} |')
    if banks:
        lines += [
            '', '### Label-bank update after a scoring pass', '',
            'The hook\'s `update_in_blocks` (gather the rows, update rule, '
            'pseudo-label diagnostics) on random scores, one process; bank '
            'storage as configured. `tools/benchmark/label_bank.py` times '
            'its parts and the scoring pass.', '',
            '| config | matrix | update (s) | peak memory (MB) | bank '
            '(MB) |', '| --- | --- | --- | --- | --- |'
        ]
        for row in banks:
            lines.append(f'| {row["name"]} | {row["matrix"]} | '
                         f'{row["time"]:.3f} | {mb(row["memory"])} | '
                         f'{mb(row["storage"])} |')
    lines += ['', '### Targets', '']
    lines.append(
        '- every loss within its target ratio to BCE: ' +
        ('met' if not missed_losses else
         f'**missed** by {", ".join(missed_losses)}. The reference is one '
         'fused ATen kernel forward and one backward; the SPML losses are '
         'compositions of elementwise operators (the "ops" column), and on '
         'logits this small their time follows the number of operators '
         'rather than the arithmetic, unless one operator dominates (the '
         '"costliest op" column). The heads\' share of an iteration '
         '(below) is what a training run pays.'))
    lines.append(
        f'- head share of an iteration under {100 * HEAD_SHARE_TARGET:g}%: '
        + ('met' if not missed_heads else
           f'**missed** by {", ".join(missed_heads)}'))
    lines += [
        '', f'Command: `{command}`', '', f'Machine: {machine_summary()}', ''
    ]
    return '\n'.join(lines)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=30,
                        help='interleaved rounds of the loss timings')
    parser.add_argument('--iteration-rounds', type=int, default=5,
                        help='interleaved rounds of the training iterations')
    parser.add_argument('--batch-size', type=int, default=8,
                        help='batch of the training iteration')
    parser.add_argument('--img-size', type=int, default=224,
                        help='image side of the training iteration')
    parser.add_argument('--bank-repeats', type=int, default=3)
    parser.add_argument('--bank-scale', type=float, default=1.,
                        help='fraction of the COCO / NUS-WIDE sample counts')
    parser.add_argument('--threads', type=int,
                        help="torch CPU threads (default: torch's)")
    parser.add_argument('--quick', action='store_true',
                        help='a smoke run: 3 rounds, 64 px, batch 2, 1%% of '
                        'the bank scale; not meaningful')
    parser.add_argument('--out-dir', default=osp.join(REPO, 'docs',
                                                      'results'))
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.iteration_rounds, args.bank_repeats = 3, 1, 1
        args.img_size, args.batch_size, args.bank_scale = 64, 2, 0.01
    return args


def main():
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    progress = ProgressBar(
        len(LOSS_SHAPES) * args.rounds + args.iteration_rounds * 5 +
        len(SIZES) * args.bank_repeats * sum(
            bool(pseudo_label_hook(load(p)))
            for p in method_configs('coco').values()))
    losses = measure_losses(args.rounds, progress)
    iteration = measure_iteration(args.batch_size, args.img_size,
                                  args.iteration_rounds, progress)
    banks = measure_banks(args.bank_scale, args.bank_repeats, progress)
    print()
    command = 'python tools/benchmark/speed.py ' + ' '.join(sys.argv[1:])
    text = report(losses, iteration, banks, args, command)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(osp.join(args.out_dir, 'speed.md'), 'w') as f:
        f.write(text)
    print(text)
    if osp.abspath(args.out_dir) == osp.join(REPO, 'docs', 'results'):
        render_results_page(osp.join(REPO, 'docs'))


if __name__ == '__main__':
    main()
