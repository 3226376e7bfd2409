"""EPR, ROLE, LL-R, LL-Ct and LL-Cp end to end on a tiny demo dataset:
training, --resume, tools/test.py and 2-process gloo training."""
import os
import os.path as osp
import re
import socket

import pytest
import torch

from spml_mm.apis import get_method, list_methods
from tests.conftest import PYTHON, REPO, run_tool

pytestmark = pytest.mark.slow  # trainings through the tools

#: the community baselines beside AN, by key: their demo configs (IGNORE's
#: is trained, killed, resumed and tested by tests/tools/test_ignore_training.py)
CONFIGS = {
    m: get_method(m).config('demo')
    for m in list_methods(kind='baseline') if m not in ('an', 'ignore')
}
BANK = 'head.label_bank.pseudo_label'
TABLE = 'head.label_bank.estimate_logits'


def tiny_options(data_root, epochs, indices=64):
    return [
        '--cfg-options', f'train_cfg.max_epochs={epochs}',
        f'train_dataloader.dataset.data_root={data_root}',
        f'train_dataloader.dataset.indices={indices}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        'default_hooks.checkpoint.max_keep_ckpts=5', 'randomness.seed=0',
        'randomness.deterministic=True'
    ]


@pytest.mark.parametrize('method', sorted(CONFIGS))
def test_trains_resumes_and_tests(method, tiny_demo, tmp_path):
    config = CONFIGS[method]
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    out = run_tool([PYTHON, 'tools/train.py', config, '--work-dir', full] +
                   tiny_options(tiny_demo, 3))
    if method.startswith('ll'):
        # epoch e modifies a share (e - 1) delta of each batch (LL-Cp: delta)
        rates = [float(r) for r in re.findall(r'll_rate: ([\d.]+)', out)]
        expected = {'ll_cp': [0., .005, .005]}.get(method, [0., .005, .01])
        assert sorted(set(rates)) == sorted(set(expected)), rates
    out = run_tool([PYTHON, 'tools/train.py', config, '--work-dir', part,
                    '--resume', osp.join(full, 'epoch_2.pth')] +
                   tiny_options(tiny_demo, 3))
    assert 'resumed epoch: 2' in out
    a = torch.load(osp.join(full, 'epoch_3.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_3.pth'), weights_only=True)
    assert a['state_dict'].keys() == b['state_dict'].keys()
    for key, value in a['state_dict'].items():
        torch.testing.assert_close(b['state_dict'][key], value, rtol=0, atol=0)
    if method == 'll_cp':
        # 64 images in 2 batches of 32 x 10: k = ceil(320 * 0.5 %) = 2
        # corrections per batch in epochs 2 and 3, kept across --resume
        before = torch.load(osp.join(full, 'epoch_2.pth'), weights_only=True)
        assert int((before['state_dict'][BANK] == 1).sum()) == 4
        assert int((a['state_dict'][BANK] == 1).sum()) == 8
        assert (a['state_dict'][BANK][before['state_dict'][BANK] == 1] ==
                1).all()
    elif method == 'role':
        # every row trained on, at the observed positive above logit(0.6)
        table = a['state_dict'][TABLE]
        assert table.shape == (64, 10)
        assert a['state_dict']['head.label_bank.dense_steps'] == 6
        before = torch.load(osp.join(full, 'epoch_2.pth'), weights_only=True)
        assert not torch.equal(before['state_dict'][TABLE], table)
    else:
        assert BANK not in a['state_dict']
    out = run_tool([PYTHON, 'tools/test.py', config,
                    osp.join(full, 'epoch_3.pth'), '--work-dir', full] +
                   tiny_options(tiny_demo, 3))
    found = re.search(r'Epoch\(test\).*spml/mAP: ([\d.]+)', out)
    assert found and 0 < float(found.group(1)) <= 100


DUMPING_HOOK = '''
import os
import torch
from mmengine.dist import get_rank
from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS


@HOOKS.register_module()
class DumpBankHook(Hook):
    """Save each rank's per-sample state after every epoch, after the
    merge."""

    priority = 'LOW'

    def after_train_epoch(self, runner):
        state = runner.model.module.head.label_bank.state_dict()
        torch.save({k: v.cpu() for k, v in state.items()}, os.path.join(
            os.environ['DUMP_DIR'],
            f'rank{get_rank()}_epoch{runner.epoch + 1}.pth'))
'''


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.parametrize('method', sorted(CONFIGS))
def test_two_process_gloo_training(method, tiny_demo, tmp_path):
    config = osp.join(REPO, CONFIGS[method])
    env = dict(os.environ, PORT=str(free_port()), PYTHON=PYTHON)
    extra = []
    if method == 'role':  # the release's dense Adam needs one process
        extra = ['model.head.label_bank.adam=per_row']
    if method in ('ll_cp', 'role'):
        (tmp_path / 'dump_bank_hook.py').write_text(DUMPING_HOOK)
        wrapped = tmp_path / 'dumping.py'
        wrapped.write_text(
            f'_base_ = {config!r}\n'
            "custom_imports = dict(imports=['spml_mm', 'dump_bank_hook'])\n"
            "custom_hooks = _base_.custom_hooks + [dict(type='DumpBankHook')]"
            '\n')
        config = str(wrapped)
        dumps = tmp_path / 'dumps'
        dumps.mkdir()
        env.update(DUMP_DIR=str(dumps),
                   PYTHONPATH=f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}')
    work = str(tmp_path / 'dist')
    # 63 images: each rank trains one batch of 32 per epoch, the sampler
    # pads rank 1's share with one image of rank 0
    out = run_tool(['bash', 'tools/dist_train.sh', config, '2', '--work-dir',
                    work, '--no-validate'] + tiny_options(tiny_demo, 3, 63) +
                   extra, env=env)
    assert 'Distributed training: True' in out
    assert re.search(r'Epoch\(train\) \[3\]\[1/1\]', out)
    ckpt = torch.load(osp.join(work, 'epoch_3.pth'), weights_only=True)
    if method not in ('ll_cp', 'role'):
        return
    dumped = [[torch.load(dumps / f'rank{r}_epoch{epoch}.pth')
               for r in (0, 1)] for epoch in (1, 2, 3)]
    for epoch, (r0, r1) in enumerate(dumped, 1):
        # each rank changed its own samples' rows; after the merge both
        # hold all of them
        assert r0.keys() == r1.keys()
        for key in r0:
            assert torch.equal(r0[key], r1[key]), (epoch, key)
    if method == 'role':
        # every row was stepped once per epoch, by its rank (the padded
        # image by both: rank 0's row is kept)
        for epoch, (r0, _) in enumerate(dumped, 1):
            assert r0['steps'].eq(epoch).all() and r0['seen'].all(), epoch
        for key, value in dumped[2][0].items():
            assert torch.equal(ckpt['state_dict'][f'head.label_bank.{key}'],
                               value)
        return
    counts = [int((r0['pseudo_label'] == 1).sum()) for r0, _ in dumped]
    # k = 2 per rank and batch from epoch 2 on (3 when both ranks picked
    # the same entry of the padded image)
    assert counts[0] == 0 and counts[1] in (3, 4)
    assert counts[2] - counts[1] in (3, 4)
    assert torch.equal(ckpt['state_dict'][BANK], dumped[2][0]['pseudo_label'])
