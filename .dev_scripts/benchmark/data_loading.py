"""Data-loading time per batch of a config's loaders: decoding the image
files (the config as it is) against the image cache (``LoadCachedImage``,
``tools/cache_images.py``), in the main process with one thread as in a
loader worker (``num_workers=0``: the CPU time a batch costs a worker).

Writes ``data_loading.json`` and ``data_loading.md`` under ``--out``
(default ``work_dirs/data_loading``); the cache is written first if
missing.

Example:
    PYTHONPATH=.dev_scripts python -m benchmark.data_loading \\
        configs/an/efficientnet-lite0_proxy-voc.py --data-root data/proxy-voc
"""
import argparse
import copy
import json
import os
import os.path as osp
import statistics
import sys
import time

from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import Runner, set_random_seed

from benchmark.pages.data_loading import table_lines, title_lines
from benchmark.common import machine_summary

LOADERS = ('train_dataloader', 'test_dataloader')


def per_batch(cfg: Config, loader: str, batches: int, rounds: int) -> float:
    """Median over ``rounds`` of the seconds per batch of ``batches``
    batches (after one batch of warm-up)."""
    set_random_seed(0)
    built = Runner.build_dataloader(copy.deepcopy(cfg[loader]), seed=0)
    times = []
    for _ in range(rounds):
        it = iter(built)
        next(it)
        start = time.perf_counter()
        count = 0
        for _ in range(batches):
            try:
                next(it)
            except StopIteration:
                break
            count += 1
        times.append((time.perf_counter() - start) / max(count, 1))
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', nargs='?',
                        default='configs/an/efficientnet-lite0_proxy-voc.py')
    parser.add_argument('--data-root', help="the loaders' data_root")
    parser.add_argument('--batches', type=int, default=50)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--out', default=osp.join('work_dirs',
                                                  'data_loading'))
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(1)  # as PyTorch sets it in every loader worker
    import spml_mm  # noqa: F401
    from spml_mm.datasets.image_cache import (LOADERS as ALL, cache_options,
                                              build_image_cache,
                                              cached_steps,
                                              config_image_paths,
                                              default_cache_file)
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(args.config)
    for name in ALL:
        if args.data_root:
            cfg[name].dataset.data_root = args.data_root
        cfg[name].update(num_workers=0, persistent_workers=False)
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    paths = config_image_paths(cfg)
    cache = default_cache_file(paths, steps,
                               cfg.train_dataloader.dataset.data_root)
    if not osp.isfile(osp.splitext(cache)[0] + '.json'):
        build_image_cache(paths, steps, cache)
    fast = copy.deepcopy(cfg)
    fast.merge_from_dict(dict(o.split('=', 1) for o in cache_options(cache)))
    rows = {}
    for loader in LOADERS:
        stock = per_batch(cfg, loader, args.batches, args.rounds)
        cached = per_batch(fast, loader, args.batches, args.rounds)
        rows[loader] = dict(batch_size=cfg[loader].batch_size,
                            stock_s=stock, cached_s=cached)
        print(f'{loader}: {stock * 1e3:.2f} ms a batch decoding files, '
              f'{cached * 1e3:.2f} ms from the cache', flush=True)
    command = ' '.join(['PYTHONPATH=.dev_scripts',
                        'python -m benchmark.data_loading',
                        *(sys.argv[1:] if argv is None else argv)])
    record = dict(command=command, machine=machine_summary(),
                  config=args.config, cache=cache, rows=rows)
    lines = title_lines(record, args.rounds, args.batches) + table_lines(
        rows) + ['']
    os.makedirs(args.out, exist_ok=True)
    with open(osp.join(args.out, 'data_loading.json'), 'w') as f:
        json.dump(record, f, indent=1)
    with open(osp.join(args.out, 'data_loading.md'), 'w') as f:
        f.write('\n'.join(lines))
    print('\n'.join(lines))
    print(f'wrote {osp.join(args.out, "data_loading.md")} and '
          'data_loading.json beside it')
    return record


if __name__ == '__main__':
    main()
