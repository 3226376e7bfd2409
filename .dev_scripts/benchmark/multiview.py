"""Time and peak memory of a multi-view training step against a one-view step.

Builds the model and optimizer of a config (default: the LASD demo) and runs
``model.train_step`` (view stacking by the data preprocessor, one backbone
pass over all views, SPML loss on the first view, consistency term, backward,
optimizer step) on synthetic batches shaped like the config's images: once
with V views and the head's consistency term, once with one view and no
consistency term. Data loading is not timed (it grows with V as well).

Step time is the median wall time and, on the CPU, also the median CPU
time of the process (``time.process_time``, all its threads), which other
processes on a shared machine do not inflate. Each setting runs in a fresh
process, so its peak memory is its own: on CUDA
``torch.cuda.max_memory_allocated``; on the CPU the growth of the peak
resident set size (``ru_maxrss``) over the resident size just before the
first step (activations, gradients and optimizer state, not the weights).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.multiview
    python -m benchmark.multiview configs/lasd/resnet50_voc.py \\
        --img-size 448 --batch-size 8 --steps 5 --device cuda
"""
import argparse
import json
import multiprocessing
import resource
import statistics
import time

DEFAULT_CONFIG = 'configs/lasd/lasd_vgg11bn_demo.py'


def parse_args():
    parser = argparse.ArgumentParser(
        description='3-view vs 1-view training step: time and peak memory')
    parser.add_argument('config', nargs='?', default=DEFAULT_CONFIG)
    parser.add_argument('--views', type=int, default=3,
                        help='views of the multi-view step (>= 2)')
    parser.add_argument('--batch-size', type=int,
                        help='images per view; default: the config\'s')
    parser.add_argument('--img-size', type=int, default=48,
                        help='side of the synthetic images (48 for the demo, '
                        '448 for the ResNet-50 configs)')
    parser.add_argument('--steps', type=int, default=20,
                        help='timed steps per setting')
    parser.add_argument('--warmup', type=int, default=3,
                        help='untimed steps before them')
    parser.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    parser.add_argument('--threads', type=int,
                        help='torch CPU threads; default: torch\'s')
    parser.add_argument('--out', help='also write the results as JSON here')
    args = parser.parse_args()
    if args.views < 2:
        parser.error(f'--views must be >= 2, got {args.views}')
    return args


def resident_mib() -> float:
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    raise RuntimeError('no VmRSS in /proc/self/status')


def measure(config: str, views: int, batch_size: int, img_size: int,
            steps: int, warmup: int, device: str, threads: int) -> dict:
    """Run one setting in this (fresh) process; return times and memory."""
    import torch
    from mmengine.config import Config
    from mmengine.optim import build_optim_wrapper
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    from mmpretrain.structures import DataSample

    import spml_mm  # noqa: F401  (registers the plugin)

    if threads:
        torch.set_num_threads(threads)
    cfg = Config.fromfile(config)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model_cfg = cfg.model
    model_cfg.setdefault('data_preprocessor', cfg.get('data_preprocessor'))
    if views == 1:
        model_cfg.head.consistency = None
    model = MODELS.build(model_cfg).to(device).train()
    optim_wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    num_classes = model.head.num_classes

    g = torch.Generator().manual_seed(0)

    def images():
        return [
            torch.randint(0, 256, (3, img_size, img_size), generator=g,
                          dtype=torch.uint8) for _ in range(batch_size)
        ]

    labels = torch.randint(0, num_classes, (batch_size, ), generator=g)
    inputs = images() if views == 1 else [images() for _ in range(views)]

    def step():
        samples = [DataSample().set_gt_label([int(c)]) for c in labels]
        losses = model.train_step(
            dict(inputs=inputs, data_samples=samples), optim_wrapper)
        if device == 'cuda':
            torch.cuda.synchronize()
        return losses

    if device == 'cuda':
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated() / 2**20
    else:
        base = resident_mib()
    for _ in range(warmup):
        step()
    times, cpu_times = [], []
    for _ in range(steps):
        start, cpu_start = time.perf_counter(), time.process_time()
        losses = step()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    if device == 'cuda':
        peak = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return dict(
        views=views,
        images_per_step=views * batch_size,
        step_seconds=statistics.median(times),
        step_cpu_seconds=statistics.median(cpu_times),
        step_seconds_all=times,
        peak_memory_mib=peak - base,
        losses={k: v.item() for k, v in losses.items()},
        threads=torch.get_num_threads())


def main():
    args = parse_args()
    if args.batch_size is None:
        from mmengine.config import Config
        args.batch_size = Config.fromfile(
            args.config).train_dataloader.batch_size
    spawn = multiprocessing.get_context('spawn')
    results = {}
    for views in (1, args.views):
        with spawn.Pool(1) as pool:
            results[views] = pool.apply(
                measure, (args.config, views, args.batch_size, args.img_size,
                          args.steps, args.warmup, args.device,
                          args.threads))
    one, many = results[1], results[args.views]
    print(f'{args.config}: batch {args.batch_size} x {args.img_size}px, '
          f'{args.device}, {one["threads"]} threads, median of {args.steps} '
          f'steps after {args.warmup} warm-up steps')
    print(f'{"setting":<22}{"images/step":>12}{"wall time (s)":>15}'
          f'{"CPU time (s)":>14}{"peak memory (MiB)":>19}')
    for name, res in (('1 view', one),
                      (f'{args.views} views + consistency', many)):
        print(f'{name:<22}{res["images_per_step"]:>12}'
              f'{res["step_seconds"]:>15.4f}{res["step_cpu_seconds"]:>14.4f}'
              f'{res["peak_memory_mib"]:>19.1f}')
    time_ratio = many['step_seconds'] / one['step_seconds']
    cpu_ratio = many['step_cpu_seconds'] / one['step_cpu_seconds']
    memory_ratio = many['peak_memory_mib'] / one['peak_memory_mib']
    print(f'ratio {args.views} views / 1 view: wall time {time_ratio:.2f}x, '
          f'CPU time {cpu_ratio:.2f}x, peak memory {memory_ratio:.2f}x')
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(
                dict(
                    vars(args),
                    results={str(k): v
                             for k, v in results.items()},
                    time_ratio=time_ratio,
                    cpu_time_ratio=cpu_ratio,
                    memory_ratio=memory_ratio),
                f,
                indent=2)


if __name__ == '__main__':
    main()
