"""SPMLRandomStateHook keeps the generators' states in a checkpoint that
loads with weights_only=True and sets them back only on a resume.

The training it serves (RandAugment drawn in the training process, killed
and resumed) is tests/tools/test_ignore_training.py."""
import random
from types import SimpleNamespace

import numpy as np
import torch

from spml_mm.engine.hooks import SafeCheckpointHook, SPMLRandomStateHook
from spml_mm.utils import load_checkpoint_safely


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def draws():
    return (random.random(), np.random.rand(3).tolist(),
            torch.rand(3).tolist(), np.random.randn())


def saved_checkpoint(tmp_path, hook):
    checkpoint = dict(meta=dict(epoch=1), state_dict={'w': torch.ones(1)})
    hook.before_save_checkpoint(None, checkpoint)
    SafeCheckpointHook().before_save_checkpoint(None, checkpoint)
    path = str(tmp_path / 'epoch_1.pth')
    torch.save(checkpoint, path)
    return load_checkpoint_safely(path)  # weights_only=True


def test_a_resumed_run_draws_what_the_uninterrupted_one_drew(tmp_path):
    seed_all(1)
    draws()  # the first epoch's; NumPy's state now holds a cached Gaussian
    hook = SPMLRandomStateHook()
    loaded = saved_checkpoint(tmp_path, hook)
    uninterrupted = draws()
    # a new process: seeded again, as MMEngine seeds it on --resume
    seed_all(1)
    resumed = SPMLRandomStateHook()
    resumed.after_load_checkpoint(None, loaded)
    resumed.before_train(SimpleNamespace(iter=2))
    assert draws() == uninterrupted


def test_loading_weights_to_start_a_run_keeps_its_seed(tmp_path):
    """``load_from`` (iteration 0) is a new run: its own seed's draws."""
    loaded = saved_checkpoint(tmp_path, SPMLRandomStateHook())
    seed_all(5)
    expected = draws()
    seed_all(5)
    hook = SPMLRandomStateHook()
    hook.after_load_checkpoint(None, loaded)
    hook.before_train(SimpleNamespace(iter=0))
    assert draws() == expected


def test_a_checkpoint_without_the_record_resumes_as_before():
    random.seed(7)
    expected = random.random()
    random.seed(7)
    hook = SPMLRandomStateHook()
    hook.after_load_checkpoint(None, dict(meta=dict(epoch=1)))
    hook.before_train(SimpleNamespace(iter=2))
    assert random.random() == expected
