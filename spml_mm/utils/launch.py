"""What ``tools/train.py`` and ``tools/test.py`` share: the arguments every
entry point takes, the config edits both make, and the runner's run inside
the distributed set-up and teardown.

In the library rather than beside the tools so that the tools import it the
same way as a script (``python tools/train.py``), from an installed package
(``spml_mm/.mim/tools``) and when a test loads them from their file.
"""
import argparse
import logging
import os
import os.path as osp

from mmengine.config import Config
from mmengine.logging import print_log
from mmengine.device import get_device
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from .cfg_options import add_cfg_options
from .dist import (destroy_distributed, explain_distributed_timeout,
                   setup_cpu_distributed)

#: The default hooks MMEngine itself removes when set to None.
MMENGINE_DEFAULT_HOOKS = ('runtime_info', 'timer', 'sampler_seed', 'logger',
                          'param_scheduler', 'checkpoint')


def parse_launch_args(parser: argparse.ArgumentParser,
                      example: str) -> argparse.Namespace:
    """Add ``--cfg-options``, ``--launcher`` and ``--local_rank`` after a
    tool's own arguments, parse the command line and export ``LOCAL_RANK``.

    Args:
        parser (argparse.ArgumentParser): The tool's parser, with its own
            arguments.
        example (str): An override shown in ``--cfg-options``' help.

    Returns:
        argparse.Namespace: The parsed arguments.
    """
    add_cfg_options(parser, example)
    parser.add_argument(
        '--launcher',
        choices=['none', 'pytorch', 'slurm', 'mpi'],
        default='none',
        help='job launcher')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args


def apply_launch_args(cfg: Config, args: argparse.Namespace) -> None:
    """Set ``cfg.launcher`` and the work dir: ``--work-dir``, else the
    config's, else ``./work_dirs/<config name>``."""
    cfg.launcher = args.launcher
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs',
                                osp.splitext(osp.basename(args.config))[0])


def drop_disabled_hooks(cfg: Config) -> None:
    """Remove the default hooks set to None that MMEngine does not know.

    MMEngine accepts None only for its own default hooks (and removes them);
    None switches the plugin's off too (e.g.
    ``default_hooks.divergence_guard=None``).
    """
    for name in [k for k, v in cfg.get('default_hooks', {}).items()
                 if v is None and k not in MMENGINE_DEFAULT_HOOKS]:
        cfg.default_hooks.pop(name)


def check_runner_setup(cfg: Config, mode: str) -> None:
    """Refuse, before the runner is built, what the machine or the
    registries cannot serve: a ``runner_type`` that MMEngine's ``RUNNERS``
    (where the runner is built from) does not know, what the runner class
    refuses on this machine (its ``check_machine(cfg)``, if it has one: the
    GPU fast recipe's ``SPMLGPUFastRunner`` without CUDA), and mixed
    precision (``AmpOptimWrapper``, ``--amp``) for training without a GPU.

    Args:
        cfg (Config): The merged config.
        mode (str): ``'train'`` or ``'test'``.
    """
    runner_type = cfg.get('runner_type')
    if isinstance(runner_type, str) and RUNNERS.get(runner_type) is None:
        raise KeyError(
            f'runner_type={runner_type!r} is not a registered runner; '
            f'MMEngine\'s RUNNERS has {sorted(RUNNERS.module_dict)}. Set '
            'runner_type to one of them, or register the class in '
            'mmengine.registry.RUNNERS and list its module in '
            'custom_imports.')
    check_machine = getattr(
        RUNNERS.get(runner_type) if isinstance(runner_type, str) else
        runner_type, 'check_machine', None)
    if check_machine is not None:
        check_machine(cfg)
    gpu_fast = {k: v for k, v in (cfg.get('gpu_fast') or {}).items()
                if v is not None}
    runner_class = RUNNERS.get(runner_type) if isinstance(
        runner_type, str) else runner_type
    if gpu_fast and not any(
            getattr(c, '__name__', '') == 'SPMLGPUFastRunner'
            for c in getattr(runner_class, '__mro__', ())):
        print_log(
            f'gpu_fast ({", ".join(f"{k}={v!r}" for k, v in gpu_fast.items())}'
            f') is ignored: only the GPU fast recipe\'s runner reads it, and '
            f'this config\'s runner is {runner_type or "Runner"}. Add '
            "'spml_mm::_base_/runtime_gpu_fast.py' to the config's _base_ "
            '(a CUDA GPU), or, for an image cache on this runner, pass the '
            '--cfg-options that tools/cache_images.py prints.',
            logger='current', level=logging.WARNING)
    kind = str((cfg.get('optim_wrapper') or {}).get('type', ''))
    if mode == 'train' and 'AmpOptimWrapper' in kind and get_device() in (
            'cpu', 'mps'):
        raise RuntimeError(
            f'optim_wrapper.type={kind!r} (mixed precision, --amp) needs a '
            f'GPU, and this machine has none ({get_device()}); train in '
            'float32: leave out --amp, or pass --cfg-options '
            'optim_wrapper.type=OptimWrapper.')


def run_runner(cfg: Config, mode: str) -> None:
    """Check what the runner cannot (:func:`check_runner_setup`), build it
    (``runner_type`` where the config sets one) and run
    ``runner.train()`` or ``runner.test()``, on CPU ``gloo`` without CUDA
    (:func:`setup_cpu_distributed`), with collective timeouts explained
    (:func:`explain_distributed_timeout`) and the process group destroyed
    at the end.

    Args:
        cfg (Config): The merged config, ``launcher`` set.
        mode (str): ``'train'`` or ``'test'``.
    """
    check_runner_setup(cfg, mode)
    setup_cpu_distributed(cfg, cfg.launcher)
    runner = (Runner.from_cfg(cfg)
              if 'runner_type' not in cfg else RUNNERS.build(cfg))
    with explain_distributed_timeout(cfg):
        getattr(runner, mode)()
    destroy_distributed()
