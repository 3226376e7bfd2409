"""Memory and update time of the label bank at web scale (simulated scores).

Measures, for banks of N samples x C classes (default 1,000,000 x 600 and
9,000,000 x 600) in each storage mode of ``LabelBank``:

1. the bank's memory (every rank holds the whole bank): the resident memory
   its allocation adds, where it fits in ``--max-gb``; otherwise the size
   computed from its buffers' shapes, marked as computed;
2. the time of one APL update (``AsymmetricPseudoLabeling``, theta 0.9,
   T - T_w = 5 rounds, so 18% of each class's unobserved entries are
   selected) on uniform random scores generated one block of classes at a
   time, decode and encode of the compact modes included, blocks as the
   hook runs them; on all classes, or on a bank of the first
   ``--max-classes`` classes and extrapolated linearly (the update treats
   classes independently), marked as extrapolated;
3. the scoring pass's gather: ``update_in_blocks`` (gather + APL update,
   uint8 bank) in ``--world-size`` gloo processes holding their share of
   random float32 scores, at ``--gather-size`` (default 1,000,000 x 600)
   with the hook's default block bound (halved until the run fits in
   ``--max-gb``), and with one block of all classes at the largest tenth of
   that size that fits (scaled linearly, marked as extrapolated): peak
   memory each rank adds, time.

Writes ``label_bank.{md,json}`` into ``--out-dir`` (default
``work_dirs/results``; ``--out-dir docs/results`` updates the tracked page
and re-renders ``docs/RESULTS.md``).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.label_bank_scale --out-dir docs/results
    python -m benchmark.label_bank_scale --sizes 20000x600 \\
        --gather-size 20000x600   # a quick check, in work_dirs/results
"""
import argparse
import json
import os
import os.path as osp
import socket
import sys
import tempfile
import time

import torch
import torch.distributed as torch_dist
import torch.multiprocessing as mp
from mmengine.utils import ProgressBar

from spml_mm.engine.label_bank_scoring import (classes_per_block,
                                               update_in_blocks)
from spml_mm.models.label_banks import LabelBank
from spml_mm.models.label_banks.batch import ScoredBatch
from spml_mm.models.label_banks.updaters import AsymmetricPseudoLabeling
from benchmark.pages.label_bank import (DEFAULT_GATHER_MB, STORAGES,
                                        bank_bytes, gb, render)
from benchmark.pages.results import report_written
from benchmark.common import add_out_dir, command_line

#: one APL round of a 10-epoch schedule with T_w = 5
EPOCH, MAX_EPOCHS, WARMUP = 5, 10, 5


def resident_bytes() -> int:
    """This process's resident memory."""
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def reset_peak() -> None:
    """Restart this process's resident high-water mark from its current
    resident memory (Linux >= 4.0)."""
    with open('/proc/self/clear_refs', 'w') as f:
        f.write('5')


def peak_bytes() -> int:
    """This process's resident high-water mark (VmHWM; unlike
    ``ru_maxrss`` it does not start from the parent's size at fork)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no VmHWM in /proc/self/status')


def available_bytes() -> int:
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no MemAvailable in /proc/meminfo')


def _allocate(num_samples: int, num_classes: int, storage: str,
              queue) -> None:
    before = resident_bytes()
    bank = LabelBank(num_classes, num_samples, storage=storage)
    queue.put(resident_bytes() - before)
    del bank


def allocated_bytes(num_samples: int, num_classes: int,
                    storage: str) -> int:
    """The resident memory a new bank adds, in a fresh process (a process
    that freed memory before would reuse it without growing)."""
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    proc = ctx.Process(
        target=_allocate, args=(num_samples, num_classes, storage, queue))
    proc.start()
    added = queue.get()
    proc.join()
    return added


def simulated_block(num_samples: int, num_classes: int, start: int,
                    end: int, seed: int = 0):
    """Uniform scores and observed labels (one random positive per sample)
    of classes ``[start, end)``, the same whatever the block size."""
    g = torch.Generator().manual_seed(seed)
    positive = torch.randint(num_classes, (num_samples, ), generator=g)
    observed = positive[:, None] == torch.arange(start, end)
    g.manual_seed(seed + 1 + start)
    return torch.rand(num_samples, end - start, generator=g), observed


#: bytes per entry of a block while it is gathered and updated (scores and
#: labels in their local, padded, gathered (gloo's flat buffer included) and
#: reordered copies, the decoded bank block, the updater's masked scores and
#: topk buffers), to plan this benchmark's memory: 31 to 39 were measured on
#: 2 ranks
BLOCK_BYTES = 40


def measure_bank(num_samples: int, num_classes: int, storage: str,
                 max_classes: int, budget: float) -> dict:
    """Allocate a bank (if it fits) and time one APL update."""
    size = bank_bytes(num_samples, num_classes, storage)
    width = classes_per_block(num_samples, num_classes, DEFAULT_GATHER_MB)
    result = dict(
        samples=num_samples, classes=num_classes, storage=storage,
        bytes=size, bytes_per_entry=size / (num_samples * num_classes),
        memory='computed')
    if size <= budget:
        result.update(
            resident_bytes=allocated_bytes(num_samples, num_classes,
                                           storage),
            memory='measured')
    # time on a bank of the timed classes only: the same work per class
    classes = min(num_classes, max_classes)
    if bank_bytes(num_samples, classes, storage) + \
            BLOCK_BYTES * num_samples * width > budget:
        return result
    bank = LabelBank(classes, num_samples, storage=storage)
    apl = AsymmetricPseudoLabeling(0.9)
    blocks = range(0, classes, width)
    progress = ProgressBar(len(blocks))
    seconds, selected = 0., 0
    for start in blocks:
        end = min(start + width, classes)
        scores, observed = simulated_block(num_samples, num_classes, start,
                                           end)
        begin = time.perf_counter()
        with bank.class_block(start, end) as block:
            selected += apl.update(block, scores, observed, EPOCH,
                                   MAX_EPOCHS, WARMUP)['new_negatives']
        seconds += time.perf_counter() - begin
        del scores, observed
        progress.update()
    sys.stdout.write('\n')
    result.update(
        update_classes=classes, update_seconds=seconds,
        update_seconds_all=seconds * num_classes / classes,
        selected_share=selected / (num_samples * classes), block=width)
    return result


def gather_worker(rank: int, world_size: int, port: int, num_samples: int,
                  num_classes: int, max_gather_mb: float, out: str) -> None:
    """One rank: score its share (random), then gather and update."""
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    torch_dist.init_process_group('gloo', rank=rank, world_size=world_size)
    positive = torch.randint(
        num_classes, (num_samples, ),
        generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(100 + rank)
    # DefaultSampler without shuffling: rank r scores samples r, r + W, ...
    shard = torch.arange(rank, num_samples, world_size)
    records = []
    for index in shard.split(256):
        observed = positive[index, None] == torch.arange(num_classes)
        records.append(ScoredBatch(index, torch.rand(len(index), num_classes,
                                                     generator=g),
                                   observed, None))
    bank = LabelBank(num_classes, num_samples, storage='uint8')
    torch_dist.barrier()
    reset_peak()
    before = resident_bytes()
    begin = time.perf_counter()
    update_in_blocks(bank, records, AsymmetricPseudoLabeling(0.9), EPOCH,
                     MAX_EPOCHS, WARMUP, max_gather_mb)
    seconds = time.perf_counter() - begin
    extra = peak_bytes() - before
    state = torch.cat([b.view(-1).float() for b in bank.buffers()])
    stats = torch.tensor([extra, seconds, state.sum().item(),
                          state.pow(2).sum().item()], dtype=torch.float64)
    gathered = [torch.zeros_like(stats) for _ in range(world_size)]
    torch_dist.all_gather(gathered, stats)
    if rank == 0:
        rows = torch.stack(gathered)
        with open(out, 'w') as f:
            json.dump(
                dict(peak_extra_bytes=rows[:, 0].max().item(),
                     seconds=rows[:, 1].max().item(),
                     identical_banks=bool((rows[:, 2:] == rows[0, 2:]).all()),
                     block=classes_per_block(num_samples, num_classes,
                                             max_gather_mb)), f)
    torch_dist.destroy_process_group()


def measure_gather(num_samples: int, num_classes: int, world_size: int,
                   max_gather_mb: float) -> dict:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = osp.join(tmp, 'gather.json')
        mp.spawn(
            gather_worker,
            args=(world_size, port, num_samples, num_classes, max_gather_mb,
                  out),
            nprocs=world_size)
        with open(out) as f:
            result = json.load(f)
    result.update(samples=num_samples, classes=num_classes,
                  world_size=world_size, max_gather_mb=max_gather_mb)
    return result


def size_arg(text: str):
    num_samples, num_classes = text.lower().split('x')
    return int(num_samples), int(num_classes)


def make_parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--sizes', nargs='+', type=size_arg,
        default=[(1000000, 600), (9000000, 600)],
        help='banks to measure, as NxC')
    parser.add_argument(
        '--max-gb', type=float,
        help='memory this benchmark may use; defaults to half of the '
        "machine's available memory")
    parser.add_argument(
        '--max-classes', type=int, default=600,
        help='time the update on at most this many classes per bank and '
        'extrapolate to all')
    parser.add_argument(
        '--max-classes-large', type=int, default=32,
        help='--max-classes for banks of more than 2,000,000 samples')
    parser.add_argument(
        '--gather-size', type=size_arg, default=(1000000, 600),
        help='NxC of the gather measurement')
    parser.add_argument('--world-size', type=int, default=2)
    parser.add_argument(
        '--render-only', action='store_true',
        help='rewrite label_bank.md from the label_bank.json of --out-dir')
    parser.add_argument(
        '--gather-only', action='store_true',
        help='measure the gather only; the bank rows come from the '
        'label_bank.json of --out-dir')
    add_out_dir(parser, 'label_bank.{md,json}')
    return parser


def measure_banks(args, budget: float) -> list:
    """The memory and update rows of every bank of ``--sizes`` in every
    storage."""
    banks = []
    for num_samples, num_classes in args.sizes:
        for storage in STORAGES:
            max_classes = (args.max_classes_large if num_samples > 2000000
                           else args.max_classes)
            print(f'{num_samples:,} x {num_classes}, {storage}')
            banks.append(
                measure_bank(num_samples, num_classes, storage, max_classes,
                             budget))
            print(json.dumps(banks[-1]))
    return banks


def measure_gathers(args, budget: float) -> list:
    """The gather at ``--gather-size`` with the hook's default block bound
    (halved until it fits in ``budget``), and with one block of all classes
    at the largest tenth of that size that fits."""
    num_samples, num_classes = args.gather_size
    world = args.world_size

    start_bytes = resident_bytes()  # imports: each rank has them too

    def gather_bytes(n, mb):
        """Planned memory of all ranks: imports, scores and labels (5 bytes
        per entry of a rank's share), uint8 bank, one block in flight."""
        width = classes_per_block(n, num_classes, mb)
        return world * (start_bytes + 5 * n * num_classes / world +
                        bank_bytes(n, num_classes, 'uint8') +
                        BLOCK_BYTES * n * width)

    # the hook's default bound, or a smaller one that fits this machine
    block_mb = DEFAULT_GATHER_MB
    while gather_bytes(num_samples, block_mb) > budget and \
            classes_per_block(num_samples, num_classes, block_mb) > 8:
        block_mb /= 2
    if gather_bytes(num_samples, block_mb) > budget:
        raise SystemExit(
            f'the gather at {num_samples:,} x {num_classes} on {world} ranks '
            f'needs about {gb(gather_bytes(num_samples, block_mb))}, more '
            f'than --max-gb {gb(budget)}; lower --gather-size or '
            '--world-size')
    whole = num_samples
    while gather_bytes(whole, 4 * whole * num_classes / 2**20 + 1) > budget:
        whole //= 10
    gathers = []
    for n, mb in ((num_samples, block_mb),
                  (whole, 4 * whole * num_classes / 2**20 + 1)):
        print(f'gather {n:,} x {num_classes} on {world} ranks, '
              f'max_gather_mb={mb:g}')
        gathers.append(measure_gather(n, num_classes, world, mb))
        print(json.dumps(gathers[-1]))
    return gathers


def main():
    args = make_parser().parse_args()
    json_path = osp.join(args.out_dir, 'label_bank.json')
    if args.render_only:
        with open(json_path) as f:
            write_results(json.load(f), args.out_dir)
        return
    budget = (args.max_gb * 1e9 if args.max_gb else 0.5 * available_bytes())
    print(f'memory budget {gb(budget)}')
    if args.gather_only:
        with open(json_path) as f:
            banks = json.load(f)['banks']
    else:
        banks = measure_banks(args, budget)
    gathers = measure_gathers(args, budget)
    command = command_line([a for a in sys.argv if a != '--gather-only'])
    results = dict(
        banks=banks, gather=gathers, command=command,
        load=os.getloadavg()[0])
    os.makedirs(args.out_dir, exist_ok=True)
    with open(json_path, 'w') as f:
        json.dump(results, f, indent=1)
    write_results(results, args.out_dir)


def write_results(results: dict, out_dir: str) -> None:
    """label_bank.md, and docs/RESULTS.md when ``out_dir`` is docs/results.
    """
    text = render(results)
    with open(osp.join(out_dir, 'label_bank.md'), 'w') as f:
        f.write(text)
    print(text)
    report_written(out_dir, ['label_bank.json', 'label_bank.md'])


if __name__ == '__main__':
    main()
