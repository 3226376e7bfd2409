"""Class folders, Open Images-style CSVs and L48's release, each on a tiny
fixture in its real layout, read through its config's dataset: the
observations are the files' (no protocol draw)."""
import csv
import json
import os
import os.path as osp

import numpy as np
import pytest
from mmengine.registry import init_default_scope

import spml_mm  # noqa: F401  (registers the plugin)
from spml_mm.datasets.l48 import convert_l48
from tests.datasets.conftest import _config_dataset, _write_image

FOLDER_CLASSES = ('cat', 'dog', 'fox')
OI_CLASSES = (('/m/01', 'Cat'), ('/m/02', 'Dog'), ('/m/03', 'Fox'),
              ('/m/04', 'Tree'))
SPECIES = ('amecro', 'amerob', 'blujay', 'norcar')


def make_class_folders(root, with_test_json=True):
    for c, name in enumerate(FOLDER_CLASSES):
        for j in range(5):
            _write_image(osp.join(root, 'train', name, f'{name}{j}.jpg'), c)
    items = [dict(img_path=f't{k}.jpg', gt_label=labels)
             for k, labels in enumerate([[0], [0, 1], [2], [1, 2], [0, 2]])]
    for item in items:
        _write_image(osp.join(root, 'test', item['img_path']))
    if with_test_json:
        with open(osp.join(root, 'test.json'), 'w') as f:
            json.dump(dict(metainfo=dict(classes=list(FOLDER_CLASSES)),
                           data_list=items), f)
    return items


#: (ImageID, {class column: Confidence}) of the training and test CSVs.
OI_TRAIN = [(f'{k:016x}', labels) for k, labels in enumerate([
    {0: 1, 1: 0}, {1: 1, 3: 1, 2: 0}, {2: 1}, {0: 1, 3: 0}, {3: 1, 0: 0},
    {1: 1}, {0: 0, 2: 0}, {2: 1, 1: 1}, {0: 1}, {3: 1, 1: 0}])]
OI_TEST = [(f'{k + 100:016x}', labels) for k, labels in enumerate([
    {0: 1, 1: 0, 2: 0}, {1: 1, 0: 0}, {2: 1, 3: 0}, {3: 1, 0: 0, 2: 0}])]


def make_open_images(root):
    with open(osp.join(root, 'class-descriptions-boxable.csv'), 'w') as f:
        f.writelines(f'{i},{n}\n' for i, n in OI_CLASSES)  # no header
    for name, rows, folder in (
            ('oidv6-train-annotations-human-imagelabels.csv', OI_TRAIN,
             'train'),
            ('validation-annotations-human-imagelabels.csv', OI_TEST,
             'validation')):
        with open(osp.join(root, name), 'w', newline='') as f:
            out = csv.writer(f)
            out.writerow(['ImageID', 'Source', 'LabelName', 'Confidence'])
            for image, labels in rows:
                _write_image(osp.join(root, folder, f'{image}.jpg'))
                for c, conf in labels.items():
                    out.writerow([image, 'verification', OI_CLASSES[c][0],
                                  conf])
                # a class outside the class file: skipped and counted
                out.writerow([image, 'crowdsource-verification', '/m/99', 1])


def make_l48(root):
    """Four assets (3 train, 1 test) of 3 clips, in the README's fields."""
    assets, clips = [], []
    for a in range(4):
        split = 'test' if a == 3 else 'train'
        assets.append(dict(
            id=a if split == 'train' else 8000, split=split,
            target_species_code=SPECIES[a % 3],
            possible_species_codes=list(SPECIES[:3]),
            observed_species_codes=[SPECIES[a % 3], SPECIES[(a + 1) % 3]],
            present_species_codes=[SPECIES[a % 3]],
            unknown_species_codes=[], absent_species_codes=[SPECIES[3]]))
        for j in range(3):
            aid = assets[-1]['id']
            path = f'images/{aid}/{j}.jpg'
            _write_image(osp.join(root, path), j)
            present = [SPECIES[a % 3]] if j else []  # clip 0: no bird
            clips.append(dict(
                id=len(clips), asset_id=aid, clip_order=j, file_path=path,
                width=750, height=236, present_species_codes=present,
                unknown_species_codes=[SPECIES[(a + 1) % 3]],
                absent_species_codes=[SPECIES[3]], boxes=[]))
    with open(osp.join(root, 'assets.json'), 'w') as f:
        json.dump(assets, f)
    with open(osp.join(root, 'clips.json'), 'w') as f:
        json.dump(clips[::-1], f)  # the converter orders the clips itself
    with open(osp.join(root, 'taxa.csv'), 'w') as f:
        f.write('species_code,common_name\n' +
                ''.join(f'{s},{s.upper()}\n' for s in SPECIES))


def test_class_folders_train_on_the_folder_and_test_on_the_json(tmp_path):
    root = str(tmp_path)
    items = make_class_folders(root)
    init_default_scope('mmpretrain')
    config = 'configs/an/resnet50_class-folders.py'
    train = _config_dataset(config, 'train', root)
    val = _config_dataset(config, 'val', root)
    test = _config_dataset(config, 'test', root)
    assert train.metainfo['classes'] == FOLDER_CLASSES
    assert len(train) + len(val) == 15
    for k in range(len(train)):
        info = train.get_data_info(k)
        folder = info['img_path'].split(os.sep)[-2]
        assert info['gt_label'].tolist() == [FOLDER_CLASSES.index(folder)]
        assert info['gt_label_neg'].size == 0
    assert val.get_data_info(0)['gt_label_neg'].size == 0  # observed
    assert [test.get_data_info(k)['gt_label'].tolist()
            for k in range(len(test))] == [i['gt_label'] for i in items]
    assert 'gt_label_neg' not in test.get_data_info(0)  # full labels
    assert test.get_data_info(0)['img_path'].endswith(
        osp.join('test', 't0.jpg'))
    # without test.json: test/<class>/<image>, single labels as observed
    os.remove(osp.join(root, 'test.json'))
    _write_image(osp.join(root, 'test', 'dog', 'd.jpg'))
    test = _config_dataset(config, 'test', root)
    assert len(test) == 1 and test.get_data_info(0)['gt_label'].tolist() \
        == [1] and test.get_data_info(0)['gt_label_neg'].size == 0


def test_open_images_verified_labels_are_the_observation(tmp_path):
    root = str(tmp_path)
    make_open_images(root)
    init_default_scope('mmpretrain')
    config = 'configs/an/resnet50-partial_open-images.py'
    train = _config_dataset(config, 'train', root)
    val = _config_dataset(config, 'val', root)
    test = _config_dataset(config, 'test', root)
    assert train.metainfo['classes'] == tuple(n for _, n in OI_CLASSES)
    rows = dict(OI_TRAIN)
    # the image with negatives only is evaluated, never trained on
    seen = set()
    for dataset in (train, val):
        for k in range(len(dataset)):
            info = dataset.get_data_info(k)
            image = osp.basename(info['img_path'])[:-4]
            seen.add(image)
            labels = rows[image]
            assert sorted(info['gt_label'].tolist()) == sorted(
                c for c, v in labels.items() if v == 1)
            assert sorted(info['gt_label_neg'].tolist()) == sorted(
                c for c, v in labels.items() if v == 0)
    assert OI_TRAIN[6][0] not in {osp.basename(train.get_data_info(k)
                                  ['img_path'])[:-4]
                                  for k in range(len(train))}
    assert len(test) == len(OI_TEST)
    info = test.get_data_info(3)
    assert info['gt_label'].tolist() == [3]
    assert info['gt_label_neg'].tolist() == [0, 2]
    assert any('4 rows of other classes skipped' in note
               for note in test.layout_notes)
    # observed negatives reach the head: PackInputs keeps them
    assert 'gt_label_neg' in train.pipeline.transforms[-1].algorithm_keys \
        if train.pipeline.transforms else True


@pytest.mark.parametrize('variant', ['target', 'geo', 'checklist', 'clip'])
def test_l48_release_converts_to_the_released_observation(tmp_path,
                                                          variant):
    root, out = str(tmp_path / 'L48'), str(tmp_path / 'l48')
    make_l48(root)
    summary = convert_l48(root, out, variant)
    assert summary['train']['assets'] == 3 and summary['test']['clips'] == 3
    with open(osp.join(out, 'train.json')) as f:
        train = json.load(f)
    assert train['metainfo']['classes'] == list(SPECIES)
    first = train['data_list'][:3]  # asset 0: target amecro, clips in order
    assert [e['img_path'] for e in first] == [
        f'images/0/{j}.jpg' for j in range(3)]
    expected_neg = dict(target=[], geo=[3], checklist=[2, 3],
                        clip=[3])[variant]
    if variant == 'clip':
        assert [e['gt_label'] for e in first] == [[], [0], [0]]
    else:
        assert [e['gt_label'] for e in first] == [[0]] * 3
    assert first[1]['gt_label_neg'] == expected_neg
    with open(osp.join(out, 'test.json')) as f:
        test = json.load(f)['data_list']
    assert test[1] == dict(img_path='images/8000/1.jpg', gt_label=[0],
                           gt_label_neg=[3])

    init_default_scope('mmpretrain')
    config = 'configs/an/resnet50_l48.py'
    test_set = _config_dataset(config, 'test', out)
    # the custom json reader drops an image without a positive (the test
    # asset's clip 0, no bird), as for every custom dataset
    assert len(test_set) == 2
    info = test_set.get_data_info(0)
    assert info['gt_label'].tolist() == [0]
    assert info['gt_label_neg'].tolist() == [3]
    if variant == 'target':
        train_set = _config_dataset(config, 'train', out)
        info = train_set.get_data_info(0)
        assert info['gt_label'].size == 1 and info['gt_label_neg'].size == 0
        assert len(train_set) + len(
            _config_dataset(config, 'val', out)) == 9
    np.testing.assert_equal(summary['classes'], 4)
