import os

import torch
import torch.distributed as torch_dist
from mmengine.config import Config


def setup_cpu_distributed(cfg: Config, launcher: str) -> bool:
    """Run a ``torchrun`` job on CPUs with the ``gloo`` backend.

    MMEngine's ``init_dist`` selects a CUDA device and its default DDP wrapper
    passes ``device_ids``; both fail without a GPU. Without CUDA this creates
    the ``gloo`` process group before the runner (which then skips
    ``init_dist``) and wraps the model with ``device_ids=None``. With CUDA it
    changes nothing.

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
    if not torch_dist.is_initialized():
        torch_dist.init_process_group(backend='gloo')
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
    its group explicitly.
    """
    if torch_dist.is_available() and torch_dist.is_initialized():
        torch_dist.destroy_process_group()
