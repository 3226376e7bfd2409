"""VLPL and AEVLP end to end on a tiny demo dataset through tools/train.py,
with a synthetic teacher's score file written by the test: the bank is filled
from the file, carried by checkpoints across --resume; a file written for
other images, for other image files at the same paths (a regenerated
dataset) or without image fingerprints is refused, one written for more
images than an ``indices`` subset is read, and resuming with another file
than the checkpoint's stops unless the choice is made."""
import json
import os.path as osp
import subprocess

import numpy as np
import pytest
import torch
from mmengine import Config
from mmpretrain.registry import DATASETS

import spml_mm  # noqa: F401
from spml_mm.benchmarks.synthetic_teacher import write_synthetic_teacher
from spml_mm.datasets.teacher_scores import (dataset_image_paths,
                                             read_teacher_scores)
from tests.conftest import PYTHON, REPO, run_tool

CONFIGS = {
    'vlpl': ('configs/vlpl/vlpl_vgg11bn_demo.py', 0),
    'aevlp': ('configs/aevlp/aevlp_vgg11bn_demo.py', 4),
}


def options(data_root, score_file, indices=64, epochs=3):
    return [
        '--cfg-options', f'train_cfg.max_epochs={epochs}',
        f'train_dataloader.dataset.data_root={data_root}',
        f'train_dataloader.dataset.indices={indices}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}',
        f'model.head.label_bank.score_file={score_file}',
        'default_hooks.checkpoint.max_keep_ckpts=5', 'randomness.seed=0',
        'randomness.deterministic=True'
    ]


def refused(args):
    """The output of a command that must fail."""
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f'{" ".join(args)} did not fail:\n' + \
        out[-3000:]
    return out


def train(config, work, data_root, score_file, *extra, indices=32,
          epochs=1):
    """The ``tools/train.py`` command of a short run."""
    return [PYTHON, 'tools/train.py', config, '--work-dir', work, *extra
            ] + options(data_root, score_file, indices, epochs)


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


@pytest.mark.slow
def test_a_regenerated_dataset_refuses_its_old_scores(tmp_path):
    """Regenerated in place with another seed, the demo keeps the same
    image paths: make_demo_data.py warns of the score file and training
    refuses it, naming the file and the dataset."""
    config, _ = CONFIGS['vlpl']
    root = str(tmp_path / 'demo')
    make = [PYTHON, 'tools/make_demo_data.py', '--out-dir', root,
            '--num-train', '40', '--num-test', '20']
    run_tool(make)
    score_file = osp.join(root, 'teacher_scores', 'synthetic.npz')
    write_synthetic_teacher(training_set(config, root, None), score_file,
                            noise=0.3)
    out = run_tool(make + ['--seed', '7'])
    command = ('PYTHONPATH=.dev_scripts python -m benchmark.teacher_quality '
               '--write-teacher CONFIG --noise 0.3 --crops 0 '
               f'--teacher-out {score_file}')
    assert f'warning: {score_file} scored 32 of its 32 images before they ' \
        f'were replaced here; training refuses it. Write it again with ' \
        f'{command}' in out
    out = refused(train(config, str(tmp_path / 'run'), root, score_file,
                        indices=None))
    assert f'{score_file} scored other image files than those of the ' \
        f'dataset (SPMLDataset, {root}): 32 of the 32 images differ' in out
    assert f'Score them again with {command}' in out
    assert 'Epoch(train)' not in out


@pytest.mark.slow
def test_a_score_file_without_fingerprints(tiny_demo, tmp_path):
    """A file of an earlier version (no image fingerprints) is refused with
    the command that scores again and the one that binds it to the images;
    bound, it trains."""
    config, _ = CONFIGS['vlpl']
    dataset = training_set(config, tiny_demo, 32)
    score_file = str(tmp_path / 'old.npz')
    write_synthetic_teacher(dataset, score_file, noise=0.3)
    table = read_teacher_scores(score_file)
    np.savez(score_file, scores=table['scores'],
             img_paths=np.array(table['img_paths']),
             classes=np.array(table['classes']),
             meta=np.array(json.dumps(table['meta'])))
    work = str(tmp_path / 'run')
    out = refused(train(config, work, tiny_demo, score_file))
    assert f'{score_file} records no image fingerprints' in out
    assert 'PYTHONPATH=.dev_scripts python -m benchmark.teacher_quality ' \
        '--write-teacher CONFIG --noise 0.3 --crops 0 ' \
        f'--teacher-out {score_file}' in out
    # the advice writes a bound copy, never over the file it read
    bound = str(tmp_path / 'old_bound.npz')
    bind = (f'python tools/score_teacher.py CONFIG --source file --scores '
            f'{score_file} --out {bound} and train with --cfg-options '
            f'model.head.label_bank.score_file={bound}')
    assert bind in out
    run_tool([PYTHON, 'tools/score_teacher.py', config] +
             bind.split(' and ')[0].split()[3:] + [
                 '--cfg-options',
                 f'train_dataloader.dataset.data_root={tiny_demo}',
                 'train_dataloader.dataset.indices=32'
             ])
    out = run_tool(train(config, work, tiny_demo, bound))
    assert f'Teacher scores of 32 training images from {bound}' in out


@pytest.mark.slow
def test_a_whole_set_file_serves_an_indices_subset(tiny_demo, tmp_path):
    config, _ = CONFIGS['vlpl']
    score_file = str(tmp_path / 'teacher.npz')
    scores = write_synthetic_teacher(
        training_set(config, tiny_demo, None), score_file, noise=0.3)
    work = str(tmp_path / 'run')
    out = run_tool(train(config, work, tiny_demo, score_file))
    assert f'Teacher scores of 32 training images from {score_file}' in out
    # the bank holds the rows of the subset's images
    rows = [dataset_image_paths(training_set(config, tiny_demo, None))
            .index(p) for p in dataset_image_paths(
                training_set(config, tiny_demo, 32))]
    bank = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)[
        'state_dict']['head.label_bank.teacher_score']
    torch.testing.assert_close(bank, torch.from_numpy(scores[rows]))


@pytest.mark.slow
def test_resuming_with_another_score_file(tiny_demo, tmp_path):
    """Trained on one teacher's file and resumed with another's: refused
    with both files named; resume_scores chooses, and the log says which
    scores train."""
    config, _ = CONFIGS['vlpl']
    dataset = training_set(config, tiny_demo, 32)
    first, second = str(tmp_path / 'a.npz'), str(tmp_path / 'b.npz')
    scores = dict(a=write_synthetic_teacher(dataset, first, noise=0.3),
                  b=write_synthetic_teacher(dataset, second, noise=0.6,
                                            seed=1))
    run_tool(train(config, str(tmp_path / 'a'), tiny_demo, first))
    checkpoint = str(tmp_path / 'a' / 'epoch_1.pth')
    out = refused(train(config, str(tmp_path / 'refused'), tiny_demo, second,
                        '--resume', checkpoint, epochs=2))
    assert f'teacher scores of head.label_bank (32 images, from {first} ' \
        '(sha256 ' in out
    assert f'differ from those of {second} (sha256 ' in out
    assert f'Resume with model.head.label_bank.score_file={first} ' in out
    assert 'default_hooks.teacher_scores.resume_scores=checkpoint' in out
    assert 'Epoch(train)' not in out
    choices = (('file', second, 'b'),
               ('checkpoint', f"the checkpoint's, from {first}", 'a'))
    for choice, used, expected in choices:
        work = str(tmp_path / choice)
        out = run_tool(
            train(config, work, tiny_demo, second, '--resume', checkpoint,
                  epochs=2) +
            [f'default_hooks.teacher_scores.resume_scores={choice}'])
        assert f"resume_scores='{choice}': training on the teacher scores " \
            f'of {used}' in out
        bank = torch.load(osp.join(work, 'epoch_2.pth'), weights_only=True)
        torch.testing.assert_close(
            bank['state_dict']['head.label_bank.teacher_score'],
            torch.from_numpy(scores[expected]))
        assert bank['meta']['teacher_scores']['head.label_bank'][
            'score_file'] == (second if choice == 'file' else first)


@pytest.mark.slow
def test_a_synthetic_file_without_crops_names_its_command(
        tiny_demo, tmp_path):
    config, _ = CONFIGS['aevlp']
    score_file = str(tmp_path / 'teacher.npz')
    write_synthetic_teacher(training_set(config, tiny_demo, 32), score_file,
                            noise=0.3)
    out = refused(train(config, str(tmp_path / 'run'), tiny_demo,
                        score_file))
    assert f'{score_file} holds no crop scores; write it with crop scores ' \
        '(AEVLP scores a 4 x 4 grid) with PYTHONPATH=.dev_scripts python ' \
        '-m benchmark.teacher_quality --write-teacher CONFIG --noise 0.3 ' \
        f'--crops 4 --teacher-out {score_file}' in out
    assert '--source synthetic' not in out
