"""spml_mm.utils.dist: the CPU gloo group's timeout and end of life."""
import os
import re
import subprocess
import time

import pytest
import torch.distributed as torch_dist
from mmengine.config import Config

from spml_mm.utils import destroy_distributed
from spml_mm.utils.dist import dist_timeout
from tests.conftest import PYTHON, REPO
from tests.tools.test_train_test import free_port


def test_destroy_distributed(tmp_path):
    # no group: nothing to do, no error
    destroy_distributed()
    torch_dist.init_process_group(
        'gloo', init_method=f'file://{tmp_path}/store', rank=0, world_size=1)
    assert torch_dist.is_initialized()
    destroy_distributed()
    assert not torch_dist.is_initialized()


SLEEPY_HOOK = '''
import time
from mmengine.dist import get_rank
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class SleepOnRankHook(Hook):
    """Rank ``rank`` stops answering before its first iteration."""

    def __init__(self, rank, seconds):
        self.rank, self.seconds = rank, seconds

    def before_train_epoch(self, runner):
        if get_rank() == self.rank:
            time.sleep(self.seconds)
'''


@pytest.mark.slow
def test_a_hung_rank_ends_the_job_naming_rank_and_timeout(tiny_demo, tmp_path):
    """Rank 1 sleeps 120 s; with env_cfg.dist_cfg.timeout=3 rank 0's first
    gradient all-reduce fails after 3 s, naming itself and the timeout, and
    torchrun ends the job."""
    (tmp_path / 'sleepy_rank.py').write_text(SLEEPY_HOOK)
    (tmp_path / 'sleepy.py').write_text(
        f"_base_ = '{REPO}/configs/an/an_vgg11bn_demo.py'\n"
        "custom_imports = dict(imports=['spml_mm', 'sleepy_rank'],\n"
        "                      allow_failed_imports=False)\n"
        "custom_hooks = [dict(type='SleepOnRankHook', rank=1, seconds=120)]\n"
        "env_cfg = dict(dist_cfg=dict(timeout=3))\n")
    env = dict(os.environ, PORT=str(free_port()), PYTHON=PYTHON,
               PYTHONPATH=str(tmp_path))
    start = time.time()
    proc = subprocess.run(
        ['bash', 'tools/dist_train.sh', str(tmp_path / 'sleepy.py'), '2',
         '--work-dir', str(tmp_path / 'work'), '--cfg-options',
         f'train_dataloader.dataset.data_root={tiny_demo}',
         f'val_dataloader.dataset.data_root={tiny_demo}'],
        cwd=REPO, capture_output=True, text=True, timeout=110, env=env)
    assert proc.returncode != 0
    assert time.time() - start < 100  # not the sleeping rank's 120 s
    assert re.search(
        r'DistributedTimeoutError: rank 0 of 2 waited longer than '
        r'env_cfg.dist_cfg.timeout=3 s for the other ranks', proc.stderr), \
        proc.stderr[-3000:]


def test_timeout_is_validated():
    with pytest.raises(ValueError, match=r'env_cfg.dist_cfg.timeout must be '
                       r'a finite number of seconds > 0, got nan'):
        dist_timeout(Config(dict(env_cfg=dict(dist_cfg=dict(
            timeout=float('nan'))))))
    assert dist_timeout(Config(dict(env_cfg=dict(dist_cfg=dict(
        timeout=5))))) == 5
    assert dist_timeout(Config(dict())) is None
