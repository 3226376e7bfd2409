"""Two "nodes" on this machine: two tools/dist_train.sh invocations with
NNODES=2 and NODE_RANK 0 and 1, one process each, form one gloo job."""
import os
import os.path as osp
import subprocess

import pytest
import torch

from spml_mm.models.label_banks.storage import decode_states
from tests.conftest import PYTHON, REPO
from tests.tools.test_train_test import free_port

pytestmark = pytest.mark.slow  # two gloo nodes through tools/dist_train.sh

CONFIG = 'configs/em_apl/em_apl_vgg11bn_demo.py'

DUMP_HOOK = '''
import os
import torch
from mmengine.dist import get_rank, get_world_size
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class DumpLabelBankHook(Hook):
    """Save this rank's label bank at the end of training."""

    def after_run(self, runner):
        model = runner.model
        model = model.module if is_model_wrapper(model) else model
        torch.save(
            dict(bank=model.head.label_bank.state_dict(),
                 world_size=get_world_size(),
                 node_rank=int(os.environ['GROUP_RANK'])),
            os.path.join(os.environ['DUMP_DIR'], f'rank{get_rank()}.pth'))
'''


def test_two_nodes_end_with_identical_label_banks(tiny_demo, tmp_path):
    (tmp_path / 'dump_hook.py').write_text(DUMP_HOOK)
    config = tmp_path / 'two_nodes.py'
    config.write_text(
        f'_base_ = {osp.join(REPO, CONFIG)!r}\n'
        "custom_imports = dict(imports=['spml_mm', 'dump_hook'])\n"
        # one update, after epoch 1; blocks of 8 of the 10 classes
        "default_hooks = dict(\n"
        "    pseudo_label=dict(warmup_epochs=1, max_gather_mb=1e-4,\n"
        "                      pipeline='test'),\n"
        "    early_stopping=dict(max_drop=float('inf')))\n"
        "custom_hooks = [dict(type='SafeCheckpointHook'),\n"
        "                dict(type='SPMLDatasetCheckHook'),\n"
        "                dict(type='DumpLabelBankHook')]\n"
        "model = dict(head=dict(label_bank=dict(storage='uint8')))\n")
    dumps, work = tmp_path / 'dumps', tmp_path / 'work'
    dumps.mkdir()
    port = str(free_port())
    options = [
        '--work-dir', str(work), '--no-validate', '--cfg-options',
        'train_cfg.max_epochs=2',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        # 31 samples: the sampler pads the second rank's share
        'train_dataloader.dataset.indices=31',
        f'test_dataloader.dataset.data_root={tiny_demo}',
        'randomness.seed=0', 'randomness.deterministic=True'
    ]
    nodes = [
        subprocess.Popen(
            ['bash', 'tools/dist_train.sh', str(config), '1'] + options,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=dict(
                os.environ, NNODES='2', NODE_RANK=str(rank),
                MASTER_ADDR='127.0.0.1', PORT=port, PYTHON=PYTHON,
                DUMP_DIR=str(dumps),
                PYTHONPATH=f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}'))
        for rank in (0, 1)
    ]
    try:
        outputs = [node.communicate(timeout=300)[0] for node in nodes]
    finally:
        for node in nodes:
            node.kill()
    for node, out in zip(nodes, outputs):
        if node.returncode != 0:
            pytest.fail(f'a node failed ({node.returncode}):\n{out[-6000:]}')
    assert 'Distributed training: True' in outputs[0]
    assert 'Pseudo-labels after epoch 1: new_negatives' in outputs[0]

    first, second = (torch.load(dumps / f'rank{r}.pth') for r in (0, 1))
    assert (first['world_size'], first['node_rank']) == (2, 0)
    assert (second['world_size'], second['node_rank']) == (2, 1)
    assert first['bank'].keys() == {'state_codes', 'soft_label_code'}
    for key, value in first['bank'].items():
        assert torch.equal(second['bank'][key], value), key
    states = decode_states(first['bank']['state_codes'], 10)
    assert states.shape == (31, 10)
    assert (states == -1).any() and not (states == 1).any()
    # the checkpoint (written by rank 0) carries the same bank
    ckpt = torch.load(work / 'epoch_2.pth', weights_only=True)['state_dict']
    for key, value in first['bank'].items():
        assert torch.equal(ckpt[f'head.label_bank.{key}'], value), key
