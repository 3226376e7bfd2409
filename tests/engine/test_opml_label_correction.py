"""OPML-SP end to end: label corrections through SPMLPseudoLabelHook, kept
in checkpoints and restored by --resume."""
import os.path as osp
from types import SimpleNamespace

import pytest
import torch

from spml_mm.engine.hooks.pseudo_label_hook import SPMLPseudoLabelHook
from tests.conftest import PYTHON, run_tool

CONFIG = 'configs/opml/opml_vgg11bn-sp_demo.py'
BANK = 'head.label_bank.'


def options(data_root, epochs, *extra):
    return [
        '--cfg-options', f'train_cfg.max_epochs={epochs}',
        f'train_dataloader.dataset.data_root={data_root}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        'train_dataloader.dataset.indices=96',
        'default_hooks.checkpoint.max_keep_ckpts=-1',
        # correct from the first epoch on, with a large share
        'default_hooks.pseudo_label.updater.correction_start_epoch=1',
        'default_hooks.pseudo_label.updater.zeta=1.0', 'randomness.seed=0',
        'randomness.deterministic=True', *extra
    ]


@pytest.mark.slow
def test_corrections_persist_across_resume(tiny_demo, tmp_path):
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', full,
                    '--no-validate'] + options(tiny_demo, 3))
    assert 'Pseudo-labels after epoch 1: mean_train_ap' in out
    assert 'Pseudo-labels after epoch 2: mean_train_ap' in out
    assert 'Pseudo-labels after epoch 3' not in out
    ckpt = [
        torch.load(osp.join(full, f'epoch_{e}.pth'),
                   weights_only=True)['state_dict'] for e in (1, 2, 3)
    ]
    first = ckpt[0][BANK + 'pseudo_label'] == 1
    assert ckpt[0][BANK + 'pseudo_label'].shape == (96, 10)
    assert 0 < int(first.sum())
    ap = ckpt[0][BANK + 'class_ap']
    assert ((ap >= 0) & (ap <= 1)).all()
    # corrections persist: every later bank keeps the earlier positives
    for later in ckpt[1:]:
        assert (later[BANK + 'pseudo_label'][first] == 1).all()
    # the update after epoch 2 is in epoch 2's checkpoint; none follows 3
    torch.testing.assert_close(ckpt[2][BANK + 'pseudo_label'],
                               ckpt[1][BANK + 'pseudo_label'])

    # resume from epoch 1: the bank comes back and the run ends where the
    # uninterrupted one did
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', part,
                    '--no-validate', '--resume',
                    osp.join(full, 'epoch_1.pth')] + options(tiny_demo, 3))
    assert 'resumed epoch: 1' in out
    resumed = torch.load(osp.join(part, 'epoch_3.pth'),
                         weights_only=True)['state_dict']
    for key in ('pseudo_label', 'class_ap'):
        torch.testing.assert_close(resumed[BANK + key], ckpt[2][BANK + key])
    for key, value in ckpt[2].items():
        torch.testing.assert_close(resumed[key], value)


def test_correction_start_after_last_epoch():
    """The hook refuses the schedule before the first iteration."""
    hook = SPMLPseudoLabelHook(
        warmup_epochs=1,
        updater=dict(type='OPMLLabelUpdater', correction_start_epoch=3))
    with pytest.raises(ValueError,
                       match=r'correction_start_epoch=3 must be in '
                       r'\[warmup_epochs=1, max_epochs - 1=2\]'):
        hook.before_run(SimpleNamespace(_train_loop=object(), max_epochs=3))
