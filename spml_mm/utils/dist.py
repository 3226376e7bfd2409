import datetime
import os
from contextlib import contextmanager
from typing import Iterator, Optional

import torch
import torch.distributed as torch_dist
from mmengine.config import Config

#: PyTorch's timeout for gloo collectives when the config sets none.
DEFAULT_TIMEOUT_S = 1800


class DistributedTimeoutError(RuntimeError):
    """A collective operation did not complete within the configured time."""


def dist_timeout(cfg: Config) -> Optional[float]:
    """``env_cfg.dist_cfg.timeout`` in seconds, or None when unset."""
    timeout = cfg.get('env_cfg', {}).get('dist_cfg', {}).get('timeout')
    if timeout is None:
        return None
    if (not isinstance(timeout, (int, float)) or isinstance(timeout, bool)
            or not timeout > 0 or timeout == float('inf')):
        raise ValueError('env_cfg.dist_cfg.timeout must be a finite number '
                         f'of seconds > 0, got {timeout!r}')
    return timeout


def setup_cpu_distributed(cfg: Config, launcher: str) -> bool:
    """Run a ``torchrun`` job on CPUs with the ``gloo`` backend.

    MMEngine's ``init_dist`` selects a CUDA device and its default DDP wrapper
    passes ``device_ids``; both fail without a GPU. Without CUDA this creates
    the ``gloo`` process group before the runner (which then skips
    ``init_dist``) and wraps the model with ``device_ids=None``. The group
    honours ``env_cfg.dist_cfg.timeout`` (seconds) as MMEngine's ``nccl``
    path does: a collective that waits longer on a hung or dead rank fails.
    With CUDA it changes nothing.

    Args:
        cfg (Config): The config the runner will be built from.
        launcher (str): The job launcher (``'none'``, ``'pytorch'``, ...).

    Returns:
        bool: Whether the CPU ``gloo`` path was set up.
    """
    if launcher == 'none' or torch.cuda.is_available():
        return False
    if launcher != 'pytorch':
        raise RuntimeError(
            f'--launcher {launcher} needs CUDA; CPU-only distributed runs '
            'use --launcher pytorch under torchrun (tools/dist_train.sh).')
    timeout = dist_timeout(cfg)
    if not torch_dist.is_initialized():
        torch_dist.init_process_group(
            backend='gloo',
            timeout=None
            if timeout is None else datetime.timedelta(seconds=timeout))
    cfg.setdefault('env_cfg', {}).setdefault('dist_cfg', {})
    cfg.env_cfg.dist_cfg.backend = 'gloo'
    wrapper = cfg.get('model_wrapper_cfg') or dict(
        type='MMDistributedDataParallel', broadcast_buffers=False)
    wrapper['device_ids'] = None
    cfg.model_wrapper_cfg = wrapper
    os.environ.setdefault('LOCAL_RANK', '0')
    return True


def destroy_distributed() -> None:
    """Destroy the default process group, if any, before the process exits.

    A ``gloo`` group left to the interpreter's exit can abort a rank
    (``terminate called without an active exception``) after its work is
    done, failing the ``torchrun`` job; PyTorch asks every job to destroy
    its group explicitly. The ranks meet first: a rank that tears its
    connections down while another still finishes its last collective
    aborts that one (seen once in CI as rank 1's ``SIGABRT`` after the last
    checkpoint of a two-rank run).
    """
    if torch_dist.is_available() and torch_dist.is_initialized():
        torch_dist.barrier()
        torch_dist.destroy_process_group()


@contextmanager
def explain_distributed_timeout(cfg: Config) -> Iterator[None]:
    """Turn a collective's timeout into an error naming rank and timeout.

    Gloo reports a rank that stopped answering as a bare ``RuntimeError``
    (``Timed out waiting 3000ms for recv operation``); inside this context it
    becomes a :class:`DistributedTimeoutError` that says which rank waited,
    for how long, and which setting to change. ``torchrun`` then stops the
    other ranks, so a hung rank ends the job instead of blocking it forever.

    Args:
        cfg (Config): The run's config (``env_cfg.dist_cfg.timeout``).
    """
    try:
        yield
    except RuntimeError as err:
        if not (torch_dist.is_available() and torch_dist.is_initialized()
                and 'timed out' in str(err).lower()):
            raise
        timeout = dist_timeout(cfg)
        setting = (f'env_cfg.dist_cfg.timeout={timeout} s' if timeout
                   is not None else f'the default {DEFAULT_TIMEOUT_S} s '
                   '(env_cfg.dist_cfg.timeout unset)')
        raise DistributedTimeoutError(
            f'rank {torch_dist.get_rank()} of {torch_dist.get_world_size()} '
            f'waited longer than {setting} for the other ranks in a '
            'collective operation: another rank is hung, has died or is '
            'far slower. Check the other ranks\' logs; raise '
            'env_cfg.dist_cfg.timeout if a step legitimately takes that long '
            f'(e.g. a long scoring pass). ({err})') from err
