import random
from typing import Optional

import numpy as np
import torch
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


def random_state() -> dict:
    """Python's, NumPy's and PyTorch's (CPU and CUDA) generator states in
    builtin types and tensors, loadable with ``weights_only=True``."""
    version, words, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return dict(
        python=[version, list(words), gauss],
        numpy=[name, keys.tolist(), pos, has_gauss, cached],
        torch=torch.get_rng_state(),
        cuda=torch.cuda.get_rng_state_all()
        if torch.cuda.is_available() else [])


def set_random_state(state: dict) -> None:
    """Set the generators to ``state`` (see :func:`random_state`)."""
    version, words, gauss = state['python']
    random.setstate((version, tuple(words), gauss))
    name, keys, pos, has_gauss, cached = state['numpy']
    np.random.set_state(
        (name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state['torch'])
    if state['cuda'] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state['cuda'])


@HOOKS.register_module()
class SPMLRandomStateHook(Hook):
    """Resume the random generators with the weights.

    MMEngine seeds Python's, NumPy's and PyTorch's generators when the
    runner starts, and ``--resume`` starts them from that seed again: a
    random augmentation drawn in the training process (``num_workers=0``,
    e.g. the RandAugment strong view of IGNORE's demo) then repeats the
    first epoch's draws instead of continuing. This hook keeps the
    generators' states in every checkpoint's ``meta['random_state']`` and,
    when a run resumes (``runner.iter > 0`` at ``before_train``), sets them
    back, so that the resumed run draws what the uninterrupted one drew.
    Checkpoints without the record resume as before.

    Dataloader workers are seeded by MMEngine anew in each epoch (without
    ``persistent_workers``), so their draws already resume. On several
    ranks the checkpoint keeps rank 0's states, which every rank's equal
    when the ranks share their seed (``randomness.diff_rank_seed=False``,
    the default).

    Example:
        >>> custom_hooks = [dict(type='SPMLRandomStateHook')]
    """

    priority = 'LOW'

    def __init__(self) -> None:
        self._resumed: Optional[dict] = None

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        checkpoint.setdefault('meta', {})['random_state'] = random_state()

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        self._resumed = checkpoint.get('meta', {}).get('random_state')

    def before_train(self, runner) -> None:
        if self._resumed is not None and runner.iter > 0:
            set_random_state(self._resumed)
        self._resumed = None
