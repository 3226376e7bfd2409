"""End to end: a run that validates, keeps its best checkpoint and stops
early on the observed validation labels alone, then tests on full labels."""
import glob
import os.path as osp
import re

import pytest

from spml_mm.engine.hooks import SPMLEarlyStoppingHook
from tests.conftest import PYTHON, run_tool
from tests.engine.test_early_stopping_hook import make_runner, stop_epoch

pytestmark = pytest.mark.slow  # trains and tests through the tools

CONFIG = 'configs/an/an_vgg11bn_demo.py'
KEY = 'spml/mAP_observed'


def test_validate_and_stop_on_observed_labels(tiny_demo, tmp_path):
    work = str(tmp_path / 'observed')
    options = [
        '--cfg-options', 'train_cfg.max_epochs=3',
        'train_dataloader.batch_size=16', 'optim_wrapper.optimizer.lr=1e-2',
        'randomness.seed=0'
    ] + [f'{loader}_dataloader.dataset.data_root={tiny_demo}'
         for loader in ('train', 'val', 'test')]
    observed = [
        'val_dataloader.dataset.val_labels=observed',
        f'default_hooks.checkpoint.save_best={KEY}',
        'default_hooks.early_stopping.type=SPMLEarlyStoppingHook',
        f'default_hooks.early_stopping.monitor={KEY}'
    ]
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work] +
                   options + observed)
    assert 'SPMLDataset val: 32 images, 10 classes, 2.28 positives per ' \
        'image, evaluated on observed 1.00 positives and 0.00 negatives ' \
        'per image (32 images; 0 fully labelled)' in out
    val_lines = re.findall(r'Epoch\(val\).*', out)
    # the full labels never reach validation
    assert val_lines and not any('spml/mAP:' in line for line in val_lines)
    assert 'spml/mAP (full labels) not reported, read spml/mAP_observed' \
        in out
    scores = [float(re.search(rf'{KEY}: ([\d.]+)', line).group(1))
              for line in val_lines]
    expected = stop_epoch(SPMLEarlyStoppingHook(monitor=KEY), scores,
                          make_runner('observed_replay'), key=KEY)
    # this seed stops early (CPU runs are reproducible)
    assert expected is not None and len(scores) == expected < 3
    # the rule by hand: epoch 2 is no new best of the observed mAP
    assert expected == 2 and scores[1] <= scores[0]
    assert f'Early stopping after epoch {expected}: {KEY}' in out
    best = 1
    best_path = osp.join(work, f'best_spml_mAP_observed_epoch_{best}.pth')
    assert glob.glob(osp.join(work, 'best_*.pth')) == [best_path]
    # the test split keeps its full labels
    out = run_tool([PYTHON, 'tools/test.py', CONFIG, best_path,
                    '--work-dir', work] + options)
    assert re.search(r'Epoch\(test\).*spml/mAP: [\d.]+', out)
