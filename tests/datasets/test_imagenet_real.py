"""ImageNet's single labels tested on ReaL (SPMLImageNet) on a fixture in
MMPretrain's ImageNet layout with the real ReaL file (timm's wheel ships it
as timm/data/_info/imagenet_real_labels.json): the first rows of real.json
label tiny images named as ImageNet's validation images, so a shifted row
mapping changes the evaluated labels."""
import json
import os
import os.path as osp

import numpy as np
import pytest
from mmengine.registry import init_default_scope

import spml_mm  # noqa: F401  (registers the plugin)
from tests.datasets.conftest import _config_dataset, _write_image

CONFIG = 'configs/an/resnet50_imagenet-real.py'
#: Validation images in the fixture: rows 1-16 of real.json (row 1 empty).
NUM_VAL = 16


def real_labels():
    """ReaL's labels as timm's wheel ships them."""
    timm = pytest.importorskip('timm')
    path = osp.join(osp.dirname(timm.__file__), 'data', '_info',
                    'imagenet_real_labels.json')
    with open(path) as f:
        return path, json.load(f)


def make_imagenet(root, real_path, rows, train_folders=False):
    """A tiny ImageNet layout: NUM_VAL validation images with meta/val.txt
    (their first ReaL label as the single label) and real.json, and three
    training images per class that the ReaL rows use."""
    classes = sorted({c for row in rows for c in row})
    os.makedirs(osp.join(root, 'meta'), exist_ok=True)
    with open(osp.join(root, 'meta', 'val.txt'), 'w') as f:
        for k, row in enumerate(rows):
            name = f'ILSVRC2012_val_{k + 1:08d}.JPEG'
            _write_image(osp.join(root, 'val', name), k)
            f.write(f'{name} {row[0] if row else 0}\n')
    lines = []
    for c in classes:
        for j in range(3):
            path = f'n{c:08d}/n{c:08d}_{j}.JPEG'
            _write_image(osp.join(root, 'train', path), c % 200)
            lines.append(f'{path} {c}\n')
    if not train_folders:
        with open(osp.join(root, 'meta', 'train.txt'), 'w') as f:
            f.writelines(lines)
    os.symlink(real_path, osp.join(root, 'real.json'))
    return classes


@pytest.fixture(scope='module')
def imagenet(tmp_path_factory):
    path, real = real_labels()
    root = str(tmp_path_factory.mktemp('imagenet'))
    classes = make_imagenet(root, path, real[:NUM_VAL])
    return root, real, classes


def test_test_split_carries_real_label_sets_in_image_order(imagenet):
    root, real, _ = imagenet
    init_default_scope('mmpretrain')
    test = _config_dataset(CONFIG, 'test', root)
    infos = [test.get_data_info(k) for k in range(len(test))]
    # ILSVRC2012_val_00000001 has an empty ReaL set: left out
    assert real[0] == [] and len(infos) == NUM_VAL - 1
    for info in infos:
        number = int(osp.basename(info['img_path'])[15:23])
        assert sorted(info['gt_label'].tolist()) == sorted(real[number - 1])
        assert 'gt_label_neg' not in info  # full labels: spml/mAP
    # the published rows (reassessed-imagenet's real.json), by name
    by_name = {osp.basename(i['img_path']): sorted(i['gt_label'].tolist())
               for i in infos}
    assert by_name['ILSVRC2012_val_00000002.JPEG'] == [795, 970]
    assert by_name['ILSVRC2012_val_00000003.JPEG'] == [230, 231]
    assert by_name['ILSVRC2012_val_00000004.JPEG'] == [809]
    assert test.layout_notes[0].startswith('ReaL ')
    assert f'{len(real)} rows, {NUM_VAL} matched' in test.layout_notes[0]
    assert '1 matched rows empty' in test.layout_notes[0]
    assert "single label is in the ReaL set of 100.0%" in \
        test.layout_notes[1]


def test_a_shifted_row_mapping_changes_the_evaluated_labels(
        imagenet, tmp_path):
    """real.json with one row inserted at the top (every image read one row
    off) gives other label sets: an oracle of ReaL's sets, by image number,
    scores 100 on the right mapping and less on the shifted one."""
    import torch

    from spml_mm.datasets import SPMLImageNet
    from spml_mm.evaluation import SPMLAveragePrecision, SPMLReaLAccuracy

    root, real, _ = imagenet
    shifted = str(tmp_path / 'real_shifted.json')
    with open(shifted, 'w') as f:
        json.dump([[]] + real, f)

    def scores(real_file):
        dataset = SPMLImageNet(data_root=root, split='test',
                               real_file=real_file, pipeline=[])
        samples = []
        for k in range(len(dataset)):
            info = dataset.get_data_info(k)
            number = int(osp.basename(info['img_path'])[15:23])
            score = torch.zeros(1000)
            score[real[number - 1]] = 1  # the true set of this image
            samples.append(dict(pred_score=score,
                                gt_label=torch.as_tensor(info['gt_label'])))
        ap, acc = SPMLAveragePrecision(), SPMLReaLAccuracy()
        for metric in (ap, acc):
            metric.process(None, samples)
        return (ap.compute_metrics(ap.results)['mAP'],
                acc.compute_metrics(acc.results)['top1_real'])

    assert scores('real.json') == (100., 100.)
    mean_ap, top1 = scores(shifted)
    assert mean_ap < 50 and top1 < 50


def test_training_observes_the_single_label_and_validates_on_it(imagenet):
    root, _, classes = imagenet
    init_default_scope('mmpretrain')
    train = _config_dataset(CONFIG, 'train', root)
    val = _config_dataset(CONFIG, 'val', root)
    assert len(train) + len(val) == 3 * len(classes)
    for k in range(len(train)):
        info = train.get_data_info(k)
        label = int(info['img_path'].split('/')[-2][1:])
        assert info['gt_label'].tolist() == [label]
        assert info['gt_label_full'].tolist() == [label]
        assert info['gt_label_neg'].size == 0
    info = val.get_data_info(0)
    # observed labels: the one positive, every other class unknown
    assert info['gt_label'].size == 1 and info['gt_label_neg'].size == 0
    assert len(train.metainfo['classes']) == 1000


def test_class_folders_need_every_wnid(tmp_path):
    path, real = real_labels()
    root = str(tmp_path)
    make_imagenet(root, path, real[:4], train_folders=True)
    from spml_mm.datasets import SPMLImageNet
    with pytest.raises(ValueError, match='class folders; the class indices'):
        SPMLImageNet(data_root=root, split='train', pipeline=[])
    # every wnid a folder (empty ones too): the sorted order is the index
    names = os.listdir(osp.join(root, 'train'))
    for k in range(1000):
        os.makedirs(osp.join(root, 'train', f'n{k:08d}'), exist_ok=True)
    train = SPMLImageNet(data_root=root, split='train', val_frac=0.,
                         pipeline=[])
    assert {int(train.get_data_info(k)['img_path'].split('/')[-2][1:])
            == int(train.get_data_info(k)['gt_label'][0])
            for k in range(len(train))} == {True}
    assert len(train) == 3 * len(names)
