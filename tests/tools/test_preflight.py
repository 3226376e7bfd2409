"""End to end through tools/train.py: what the pre-flight answers before
the first training iteration, and the selection keys that follow the
validation labels (the documented one option, val_labels=observed)."""
import os
import os.path as osp
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch

from spml_mm.datasets import split_train_val
from tests.conftest import PYTHON, REPO, run_tool

AN = 'configs/an/an_vgg11bn_demo.py'
GR = 'configs/grloss/grloss_vgg11bn_demo.py'
OBSERVED = 'val_dataloader.dataset.val_labels=observed'

pytestmark = pytest.mark.slow


def options(data_root, epochs=1, *extra):
    return ['--cfg-options', f'train_cfg.max_epochs={epochs}'] + [
        f'{split}_dataloader.dataset.data_root={data_root}'
        for split in ('train', 'val', 'test')] + list(extra)


def train(config, work, *args):
    return run_tool([PYTHON, 'tools/train.py', config, '--work-dir',
                     str(work), *args],
                    env=dict(os.environ, PYTHONPATH=REPO))


def refused(config, work, *args):
    """A run that must stop: its output, after checking that no training
    iteration ran and no checkpoint was written."""
    proc = subprocess.run(
        [PYTHON, 'tools/train.py', config, '--work-dir', str(work), *args],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert 'Epoch(train)' not in out
    assert not (work.exists() and list(work.glob('*.pth')))
    return out


def test_observed_labels_select_on_observed_by_default(tiny_demo, tmp_path):
    """Before: a whole epoch trained, then SPMLCheckpointHook(save_best=...)
    names 'spml/mAP', which the validation metrics lack."""
    out = train(AN, tmp_path, *options(tiny_demo, 1, OBSERVED))
    assert ("SPMLPreflightHook: default_hooks.checkpoint.save_best='auto' "
            'selects on spml/mAP_observed') in out
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP_observed: '
                     r'[\d.]+', out)
    assert [p.name for p in tmp_path.glob('best_*.pth')] == [
        'best_spml_mAP_observed_epoch_1.pth']


def test_gr_early_stopping_follows_observed_labels(tiny_demo, tmp_path):
    """Before: GR stopped after its first validation on its early-stopping
    key spml/mAP."""
    out = train(GR, tmp_path, *options(tiny_demo, 2, OBSERVED))
    assert 'SPMLEarlyStoppingHook: monitor=auto watches spml/mAP_observed' \
        in out
    assert re.search(r'Epoch\(val\) \[2\]\[\d+/\d+\]\s+spml/mAP_observed',
                     out)
    assert (tmp_path / 'epoch_2.pth').is_file()


def test_an_explicit_wrong_key_is_refused_before_training(tiny_demo,
                                                          tmp_path):
    out = refused(GR, tmp_path, *options(
        tiny_demo, 1, OBSERVED, 'default_hooks.early_stopping.monitor='
        'spml/mAP'))
    assert ("ValueError: default_hooks.early_stopping.monitor='spml/mAP' "
            'names a metric that validation with '
            "val_dataloader.dataset.val_labels='observed' will not report: "
            "it reports ['spml/mAP_observed']. Set "
            "default_hooks.early_stopping.monitor='spml/mAP_observed'") in out


def test_classes_without_positive_are_named_before_training(tiny_demo,
                                                            tmp_path):
    """The report's val_full_subset=3: spml/mAP was the sum over the
    classes present divided by all 10, without a word."""
    out = train(AN, tmp_path, *options(
        tiny_demo, 1, 'val_dataloader.dataset.val_full_subset=3'))
    warning = re.search(
        r'WARNING - SPMLAveragePrecision: classes without an AP are left out '
        r'of the means: spml/mAP and spml/mAP_observed over (\d) of 10 '
        r'classes: (\d) without a positive among the 3 fully labelled images'
        r' of the val split \(([\w, ]+)\)', out)
    assert warning and int(warning.group(1)) + int(warning.group(2)) == 10
    assert len(warning.group(3).split(', ')) == int(warning.group(2))
    assert warning.start() < out.index('Epoch(train)')
    assert 'SPMLDataset val: 3 images' in out


def test_a_validation_split_without_positive_is_refused(tiny_demo,
                                                        tmp_path):
    """Before: spml/mAP 0.0, and the best checkpoint saved on it."""
    root = tmp_path / 'data'
    shutil.copytree(tiny_demo, root, ignore=shutil.ignore_patterns('images'))
    os.symlink(osp.join(tiny_demo, 'images'), root / 'images')
    labels = np.load(root / 'formatted_train_labels.npy')
    labels[split_train_val(len(labels), 0.2, 1200)[1]] = 0
    np.save(root / 'formatted_train_labels.npy', labels)
    out = refused(AN, tmp_path / 'work', *options(str(root)))
    assert ('ValueError: spml/mAP: no class has a positive among the 32 '
            'fully labelled images of the val split, so there is no mAP to '
            'report') in out


@pytest.mark.skipif(torch.cuda.is_available(), reason='needs a CPU machine')
def test_amp_and_unknown_runner_are_refused_on_cpu(tiny_demo, tmp_path):
    out = refused(AN, tmp_path, '--amp', *options(tiny_demo))
    assert ("RuntimeError: optim_wrapper.type='AmpOptimWrapper' (mixed "
            'precision, --amp) needs a GPU, and this machine has none (cpu)'
            ) in out
    out = refused(AN, tmp_path, *options(tiny_demo, 1,
                                         'runner_type=SPMLGPUFastRuner'))
    assert ("KeyError: \"runner_type='SPMLGPUFastRuner' is not a registered "
            "runner; MMEngine's RUNNERS has ['FlexibleRunner', 'Runner', "
            "'SPMLGPUFastRunner']") in out


def test_a_validation_crash_names_the_part_and_its_keys(tiny_demo,
                                                        tmp_path):
    """A validation pipeline at 4 px: VGG's third pooling gets a 1 px map.
    Before: the pooling's error and a note naming only the pre-flight's
    switch."""
    config = tmp_path / 'small_val.py'
    config.write_text(
        f"_base_ = '{osp.join(REPO, AN)}'\n"
        'val_dataloader = dict(dataset=dict(pipeline=[\n'
        "    dict(type='LoadImageFromFile'), dict(type='Resize', scale=4),\n"
        "    dict(type='PackInputs', algorithm_keys=('gt_label_neg', ))]))\n")
    out = refused(str(config), tmp_path / 'work', *options(tiny_demo))
    assert 'Output size is too small' in out
    assert re.search(
        r'Raised by SPMLPreflightHook before training, in the model on '
        r'validation batch 1 \(\d+ images of shape \(3, 4, 4\), from '
        r'val_dataloader.dataset.pipeline\): look at model '
        r'\(data_preprocessor, backbone, head\) and at that pipeline.', out)
