"""LASD with three views trained end to end by tools/train.py."""
import os.path as osp
import re

import pytest

from tests.conftest import PYTHON, run_tool

pytestmark = pytest.mark.slow  # trainings through tools/train.py

CONFIG = 'configs/lasd/lasd_vgg11bn_demo.py'


def options(data_root, *extra):
    return [
        '--cfg-options', 'train_cfg.max_epochs=2',
        f'train_dataloader.dataset.data_root={data_root}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        'default_hooks.logger.interval=1', 'randomness.seed=0', *extra
    ]


def test_two_epochs_of_multi_view_training(tiny_demo, tmp_path):
    work = str(tmp_path / 'lasd')
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work] +
                   options(tiny_demo, 'train_dataloader.dataset.indices=64'))
    # 64 training images / batch 32 = 2 iterations per epoch, each logging
    # the supervised loss and the consistency term
    logs = re.findall(
        r'Epoch\(train\) \[(\d)\]\[(\d)/2\].*loss: ([\d.]+)\s+'
        r'loss_consistency: ([\d.]+)', out)
    assert [(e, i) for e, i, _, _ in logs] == [
        (str(e), str(i)) for e in (1, 2) for i in (1, 2)]
    assert all(float(c) > 0 for _, _, _, c in logs)
    assert len(re.findall(r'Epoch\(val\) \[\d\]\[\d+/\d+\]\s+spml/mAP',
                          out)) == 2
    assert osp.isfile(osp.join(work, 'epoch_2.pth'))


SINGLE_VIEW = 'train_dataloader.dataset.pipeline.1.num_views=[1,0]'


def test_ablation_switches(tiny_demo, tmp_path):
    # one view with the consistency term on: refused before any iteration
    with pytest.raises(pytest.fail.Exception, match='at least 2 views'):
        run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir',
                  str(tmp_path / 'bad')] + options(tiny_demo, SINGLE_VIEW))
    # rows B/C of the ablation: one view, no consistency term
    out = run_tool([
        PYTHON, 'tools/train.py', CONFIG, '--work-dir',
        str(tmp_path / 'single'), '--no-validate'
    ] + options(tiny_demo, SINGLE_VIEW, 'model.head.consistency=None',
                'model.head.loss.tau=1.0', 'train_cfg.max_epochs=1',
                'train_dataloader.dataset.indices=32'))
    assert re.search(r'Epoch\(train\) \[1\]\[1/1\].* loss: [\d.]+', out)
    assert 'loss_consistency' not in out
