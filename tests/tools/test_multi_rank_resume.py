"""A two-rank EM + APL run killed after a pseudo-label update resumes to the
weights and label bank of the uninterrupted run."""
import os
import os.path as osp
import subprocess

import pytest
import torch

from tests.conftest import PYTHON, REPO, run_tool
from tests.tools.test_train_test import free_port

pytestmark = pytest.mark.slow  # two-rank trainings through tools/dist_train.sh

EXIT_HOOK = '''
import os
from mmengine.dist import barrier
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class ExitAfterEpochHook(Hook):
    """Every rank dies once the checkpoint of epoch ``epoch`` is written:
    the barrier waits for rank 0's write, which a rank that died first
    would cut short (torchrun then stops the other ranks)."""

    priority = 'LOWEST'

    def __init__(self, epoch):
        self.epoch = epoch

    def after_train_epoch(self, runner):
        if runner.epoch + 1 == self.epoch:
            barrier()
            os._exit(3)
'''

# EM + APL on the demo with updates after epochs 1, 2 and 3 of 4; no early
# stopping (it needs validation; None drops it, see tools/train.py)
CONFIG = '''
_base_ = '{repo}/configs/em_apl/em_apl_vgg11bn_demo.py'
custom_imports = dict(imports=['spml_mm', 'exit_hook'],
                      allow_failed_imports=False)
train_cfg = dict(max_epochs=4)
default_hooks = dict(pseudo_label=dict(warmup_epochs=1), early_stopping=None)
custom_hooks = [
    dict(type='SafeCheckpointHook'),
    dict(type='SPMLDatasetCheckHook'),
] + {extra}
'''


def dist_train(config, work, data_root, *extra, check=True):
    env = dict(os.environ, PORT=str(free_port()), PYTHON=PYTHON,
               PYTHONPATH=osp.dirname(config))
    args = ['bash', 'tools/dist_train.sh', config, '2', '--work-dir', work,
            '--no-validate', '--cfg-options',
            f'train_dataloader.dataset.data_root={data_root}',
            f'test_dataloader.dataset.data_root={data_root}',
            'randomness.seed=0', 'randomness.deterministic=True', *extra]
    if check:
        return run_tool(args, env=env)
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)


def test_two_rank_resume_after_a_pseudo_label_update_is_exact(
        tiny_demo, tmp_path):
    (tmp_path / 'exit_hook.py').write_text(EXIT_HOOK)
    full_cfg, killed_cfg = tmp_path / 'full.py', tmp_path / 'killed.py'
    full_cfg.write_text(CONFIG.format(repo=REPO, extra='[]'))
    killed_cfg.write_text(CONFIG.format(
        repo=REPO, extra="[dict(type='ExitAfterEpochHook', epoch=2)]"))
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')

    out = dist_train(str(full_cfg), full, tiny_demo)
    assert 'Pseudo-labels after epoch 3' in out
    proc = dist_train(str(killed_cfg), part, tiny_demo, check=False)
    assert proc.returncode != 0
    assert 'Pseudo-labels after epoch 2' in proc.stdout + proc.stderr
    assert not osp.isfile(osp.join(part, 'epoch_3.pth'))
    out = dist_train(str(full_cfg), part, tiny_demo, '--resume')
    assert 'resumed epoch: 2' in out

    a = torch.load(osp.join(full, 'epoch_4.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_4.pth'), weights_only=True)
    banks = [k for k in a['state_dict'] if 'label_bank' in k]
    assert banks
    # the bank after epoch 3 was updated from rank 1's scores too
    assert (a['state_dict'][banks[0]] != 0).any()
    for key, value in a['state_dict'].items():
        torch.testing.assert_close(b['state_dict'][key], value, rtol=0,
                                   atol=0, msg=key)
