"""End to end: partial labels (one positive and two negatives per image)
on a tiny demo dataset, through the config's dataloader and tools/train.py.
"""
import glob
import os
import os.path as osp
import re
import socket

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import Runner
from mmpretrain.registry import MODELS

import spml_mm  # noqa: F401  (registers the plugin)
from tests.conftest import PYTHON, REPO, run_tool

CONFIG = 'configs/an/an_vgg11bn-partial_demo.py'


def test_the_dataloader_brings_the_negatives_to_the_head(tiny_demo):
    """PackInputs, MMEngine's default collate and the data preprocessor
    carry gt_label_neg: the head's target has one +1 and two -1 per row,
    where the dataset observed them."""
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    loader_cfg = cfg.train_dataloader
    loader_cfg.dataset.data_root = tiny_demo
    loader_cfg.sampler.shuffle = False
    loader = Runner.build_dataloader(loader_cfg, seed=0)
    model = MODELS.build(cfg.model)
    data = model.data_preprocessor(next(iter(loader)), True)
    target = model.head.observed_target(data['data_samples'])
    assert target.shape == (32, 10)
    assert ((target == 1).sum(1) == 1).all()
    assert ((target == -1).sum(1) == 2).all()
    dataset = loader.dataset
    for row, sample in zip(target, data['data_samples']):
        info = dataset.get_data_info(sample.sample_idx)
        assert torch.equal(row == -1, torch.zeros(10, dtype=torch.bool)
                           .index_fill(0, torch.tensor(
                               info['gt_label_neg']), True))
        # the negatives are true negatives
        assert not set(info['gt_label_neg']) & set(info['gt_label_full'])
    losses = model.loss(data['inputs'], data['data_samples'])
    assert torch.isfinite(losses['loss'])


@pytest.mark.slow
def test_train_and_validate_on_partial_labels(tiny_demo, tmp_path):
    work = str(tmp_path / 'partial')
    out = run_tool([
        PYTHON, 'tools/train.py', CONFIG, '--work-dir', work,
        '--cfg-options', 'train_cfg.max_epochs=1',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        f'val_dataloader.dataset.data_root={tiny_demo}',
        f'test_dataloader.dataset.data_root={tiny_demo}',
        'randomness.seed=0'
    ], env=dict(os.environ, PYTHONPATH=REPO))  # this checkout's spml_mm
    assert ('SPMLDataset train: 128 images, 10 classes, 2.01 positives per '
            'image, observed 1.00 positives and 2.00 negatives') in out
    assert 'PartialBCELoss' in out
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP: \d+', out)
    assert glob.glob(osp.join(work, 'best_spml_mAP_epoch_1.pth'))


@pytest.mark.slow
def test_two_process_gloo_training_on_partial_labels(tiny_demo, tmp_path):
    """Partial labels under tools/dist_train.sh (2 gloo processes): each
    rank's dataset observes 1 positive and 2 negatives per image and the
    distributed sampler, collate and DDP wrapper train on them."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PORT=str(port), PYTHON=PYTHON, PYTHONPATH=REPO)
    work = str(tmp_path / 'dist')
    out = run_tool([
        'bash', 'tools/dist_train.sh', CONFIG, '2', '--work-dir', work,
        '--no-validate', '--cfg-options', 'train_cfg.max_epochs=1',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        'train_dataloader.dataset.indices=64', 'randomness.seed=0'
    ], env=env)
    assert 'Distributed training: True' in out
    assert 'observed 1.00 positives and 2.00 negatives' in out
    assert re.search(r'Epoch\(train\) \[1\]\[1/1\]', out)
    assert osp.isfile(osp.join(work, 'epoch_1.pth'))
