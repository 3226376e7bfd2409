"""VLPL and AEVLP end to end on a tiny demo dataset through tools/train.py,
with a synthetic teacher's score file written by the test: the bank is filled
from the file, carried by checkpoints across --resume, and a file written for
other images is refused."""
import os.path as osp

import numpy as np
import pytest
import torch
from mmengine import Config
from mmpretrain.registry import DATASETS

import spml_mm  # noqa: F401
from spml_mm.benchmarks.synthetic_teacher import write_synthetic_teacher
from spml_mm.datasets.teacher_scores import read_teacher_scores
from tests.conftest import PYTHON, REPO, run_tool

CONFIGS = {
    'vlpl': ('configs/vlpl/vlpl_vgg11bn_demo.py', 0),
    'aevlp': ('configs/aevlp/aevlp_vgg11bn_demo.py', 4),
}


def options(data_root, score_file, indices=64):
    return [
        '--cfg-options', 'train_cfg.max_epochs=3',
        f'train_dataloader.dataset.data_root={data_root}',
        f'train_dataloader.dataset.indices={indices}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        f'model.head.label_bank.score_file={score_file}',
        'default_hooks.checkpoint.max_keep_ckpts=5', 'randomness.seed=0',
        'randomness.deterministic=True'
    ]


def training_set(config, data_root, indices):
    cfg = Config.fromfile(osp.join(REPO, config))
    dataset = dict(cfg.train_dataloader.dataset, data_root=data_root,
                   indices=indices)
    return DATASETS.build(dataset)


@pytest.mark.slow
@pytest.mark.parametrize('method', sorted(CONFIGS))
def test_trains_from_a_score_file_and_resumes(method, tiny_demo, tmp_path):
    config, crops = CONFIGS[method]
    score_file = str(tmp_path / 'teacher.npz')
    scores = write_synthetic_teacher(
        training_set(config, tiny_demo, 64), score_file, noise=0.3, seed=0,
        num_crops=crops)
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    out = run_tool([PYTHON, 'tools/train.py', config, '--work-dir', full] +
                   options(tiny_demo, score_file))
    assert f'Teacher scores of 64 training images from {score_file}' in out
    assert float(out.split('teacher_above_threshold: ')[1].split(',')[0]
                 .split(')')[0]) > 0
    out = run_tool([PYTHON, 'tools/train.py', config, '--work-dir', part,
                    '--resume', osp.join(full, 'epoch_2.pth')] +
                   options(tiny_demo, score_file))
    assert 'resumed epoch: 2' in out
    a = torch.load(osp.join(full, 'epoch_3.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_3.pth'), weights_only=True)
    for key, value in a['state_dict'].items():
        torch.testing.assert_close(b['state_dict'][key], value, rtol=0, atol=0)
    # the bank holds the file's rows, in sample_idx order, in the checkpoint
    torch.testing.assert_close(
        a['state_dict']['head.label_bank.teacher_score'],
        torch.from_numpy(scores))
    if crops:
        table = read_teacher_scores(score_file)['crop_scores']
        torch.testing.assert_close(
            a['state_dict']['head.label_bank.crop_max'],
            torch.from_numpy(np.max(table, axis=1)))


@pytest.mark.slow
def test_refuses_a_score_file_of_other_images(tiny_demo, tmp_path):
    config, _ = CONFIGS['vlpl']
    score_file = str(tmp_path / 'teacher.npz')
    write_synthetic_teacher(training_set(config, tiny_demo, 32), score_file,
                            noise=0.3)
    with pytest.raises(pytest.fail.Exception,
                       match='was written for another dataset'):
        run_tool([PYTHON, 'tools/train.py', config, '--work-dir',
                  str(tmp_path / 'run')] + options(tiny_demo, score_file))
