"""End to end on real single-positive layouts: ImageNet's single labels
trained and tested on ReaL (the real file from timm's wheel) through
tools/train.py and tools/test.py, and one training each on class folders,
Open Images-style CSVs and a converted L48 release. ResNet-18 without
weights at 64 px stands in for the configs' ResNet-50 at 448 px; every
other setting is the config's."""
import glob
import os
import os.path as osp
import re

import pytest

from tests.conftest import PYTHON, REPO, run_tool
from tests.datasets.test_imagenet_real import make_imagenet, real_labels
from tests.datasets.test_real_partial_layouts import (make_class_folders,
                                                      make_l48,
                                                      make_open_images)

SMALL = [
    'model.backbone.depth=18', 'model.head.in_channels=512',
    'model.backbone.init_cfg=None', 'train_cfg.max_epochs=1',
    'train_dataloader.batch_size=4', 'randomness.seed=0'
] + [f'{s}_dataloader.num_workers=0' for s in ('train', 'val', 'test')] + [
    f'{s}_dataloader.dataset.pipeline.1.scale=(64,64)'
    for s in ('train', 'val', 'test')
]


def options(root, *extra):
    return ['--cfg-options', *SMALL, *extra] + [
        f'{s}_dataloader.dataset.data_root={root}'
        for s in ('train', 'val', 'test')
    ]


def train(config, root, work, *extra):
    return run_tool([PYTHON, 'tools/train.py', config, '--work-dir', work,
                     *options(root, *extra)],
                    env=dict(os.environ, PYTHONPATH=REPO))


@pytest.mark.slow
def test_imagenet_real_trains_and_tests_on_real(tmp_path):
    path, real = real_labels()
    root = str(tmp_path / 'imagenet')
    make_imagenet(root, path, real[:16])
    config = 'configs/an/resnet50_imagenet-real.py'
    work = str(tmp_path / 'work')
    out = train(config, root, work)
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP_observed: '
                     r'[\d.]+\s+spml/top1_observed', out)
    check = run_tool([PYTHON, 'tools/check_dataset.py', config,
                      *options(root)], env=dict(os.environ, PYTHONPATH=REPO))
    assert ('test dataset: ReaL ' in check and '16 matched to local '
            'validation images' in check and '1 matched rows empty' in check)
    checkpoint = glob.glob(osp.join(work, 'best_*.pth'))[0]
    out = run_tool([PYTHON, 'tools/test.py', config, checkpoint,
                    '--work-dir', work, *options(root)],
                   env=dict(os.environ, PYTHONPATH=REPO))
    assert 'SPMLImageNet test: 15 images, 1000 classes, 1.20 positives' in out
    assert re.search(r'spml/mAP: [\d.]+ .*spml/top1_real: [\d.]+ .*'
                     r'spml/CF1: [\d.]+ .*spml/OF1: [\d.]+', out)


@pytest.mark.slow
@pytest.mark.parametrize('kind', ['class-folders', 'open-images', 'l48'])
def test_partial_layouts_train_through_their_config(tmp_path, kind):
    root = str(tmp_path / kind)
    os.makedirs(root)
    if kind == 'class-folders':
        make_class_folders(root)
        config, extra = 'configs/an/resnet50_class-folders.py', [
            'model.head.num_classes=3', 'data_preprocessor.num_classes=3']
        expected = r'spml/mAP_observed: [\d.]+'
    elif kind == 'open-images':
        make_open_images(root)
        # half the images validate, so that a class has annotated
        # positives and negatives there
        config, extra = 'configs/an/resnet50-partial_open-images.py', [
            'model.head.num_classes=4', 'data_preprocessor.num_classes=4',
            'train_dataloader.dataset.val_frac=0.5',
            'val_dataloader.dataset.val_frac=0.5']
        expected = r'spml/mAP_annotated: [\d.]+'
    else:
        release = str(tmp_path / 'release')
        os.makedirs(release)
        make_l48(release)
        run_tool([PYTHON, 'tools/prepare_spml.py', 'l48', '--data-root',
                  release, '--out-dir', root],
                 env=dict(os.environ, PYTHONPATH=REPO))
        config, extra = 'configs/an/resnet50_l48.py', [
            'model.head.num_classes=4', 'data_preprocessor.num_classes=4']
        expected = r'spml/mAP_observed: [\d.]+'
    out = train(config, root, str(tmp_path / 'work'), *extra)
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+.*' + expected, out)
