"""EPR, LL-R, LL-Ct and LL-Cp end to end on a tiny demo dataset: training,
--resume, tools/test.py and 2-process gloo training."""
import os
import os.path as osp
import re
import socket

import pytest
import torch

from tests.conftest import PYTHON, REPO, run_tool

CONFIGS = {
    'epr': 'configs/epr/vgg11bn_demo.py',
    'll_r': 'configs/ll_r/vgg11bn_demo.py',
    'll_ct': 'configs/ll_ct/vgg11bn_demo.py',
    'll_cp': 'configs/ll_cp/vgg11bn_demo.py',
}
BANK = 'head.label_bank.pseudo_label'


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
    """Save each rank's corrections after every epoch, after the merge."""

    priority = 'LOW'

    def after_train_epoch(self, runner):
        bank = runner.model.module.head.label_bank.pseudo_label
        torch.save(bank.cpu(), os.path.join(
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
    if method == 'll_cp':
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
                    work, '--no-validate'] + tiny_options(tiny_demo, 3, 63),
                   env=env)
    assert 'Distributed training: True' in out
    assert re.search(r'Epoch\(train\) \[3\]\[1/1\]', out)
    ckpt = torch.load(osp.join(work, 'epoch_3.pth'), weights_only=True)
    if method != 'll_cp':
        return
    counts = []
    for epoch in (1, 2, 3):
        r0, r1 = (torch.load(dumps / f'rank{r}_epoch{epoch}.pth')
                  for r in (0, 1))
        # each rank corrected its own samples; after the merge both hold all
        assert torch.equal(r0, r1), epoch
        counts.append(int((r0 == 1).sum()))
    # k = 2 per rank and batch from epoch 2 on (3 when both ranks picked
    # the same entry of the padded image)
    assert counts[0] == 0 and counts[1] in (3, 4)
    assert counts[2] - counts[1] in (3, 4)
    assert torch.equal(ckpt['state_dict'][BANK], r0)
