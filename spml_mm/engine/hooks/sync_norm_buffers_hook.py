from typing import List

import torch
from mmengine.dist import all_reduce, get_world_size
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS
from torch.nn.modules.batchnorm import _NormBase

from .base import unwrapped_model


@HOOKS.register_module()
class SPMLSyncNormBuffersHook(Hook):
    """Average the normalisation layers' running statistics across ranks
    at the end of every training epoch.

    MMEngine's DDP wrapper runs with ``broadcast_buffers=False``, so each
    rank's BatchNorm running mean and variance follow its own batches. The
    scoring pass of pseudo-labeling (eval mode) would then give
    rank-dependent scores, validation would depend on the rank, and a resumed
    run (every rank loads rank 0's statistics) would differ from an
    uninterrupted one. Averaging the statistics once per epoch, before
    scoring, validation and checkpointing, makes every rank hold the same
    model at each epoch boundary, so a multi-rank run resumes exactly. Only
    the running statistics of normalisation layers are reduced (one
    all-reduce per epoch); per-sample state such as the label bank is left
    alone. A single process is unaffected.

    Every SPML config has it as ``default_hooks.sync_norm_buffers``.

    Example:
        >>> default_hooks = dict(
        ...     sync_norm_buffers=dict(type='SPMLSyncNormBuffersHook'))
    """

    # before the pseudo-label hook ('NORMAL') scores the training set
    priority = 'ABOVE_NORMAL'

    def after_train_epoch(self, runner) -> None:
        if get_world_size() == 1:
            return
        model = unwrapped_model(runner)
        stats: List[torch.Tensor] = [
            buffer for module in model.modules()
            if isinstance(module, _NormBase) and module.track_running_stats
            for buffer in (module.running_mean, module.running_var)
            if buffer is not None
        ]
        if not stats:
            return
        flat = torch.cat([s.reshape(-1) for s in stats])
        all_reduce(flat, op='mean')
        for s, averaged in zip(stats, flat.split([s.numel() for s in stats])):
            s.copy_(averaged.view_as(s))
