import json
import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import (SPMLCOCO, load_coco_split, observe_uniform,
                              prepare_official)

# json category order differs from id order: columns are car, person, bicycle
CATEGORIES = [dict(id=3, name='car'), dict(id=1, name='person'),
              dict(id=2, name='bicycle')]
# image id -> category ids of its instances ([] = unannotated, dropped)
TRAIN = {9: [3], 10: [1, 1], 100: [2], 25: [1, 3], 7: []}
VAL = {3: [2, 3], 12: [1], 20: []}
# hand-derived: ids sorted as strings ('10' < '100' < '25' < '9'), not 9 < 10
TRAIN_ROWS = [(10, [0, 1, 0]), (100, [0, 0, 1]), (25, [1, 1, 0]),
              (9, [1, 0, 0])]
VAL_ROWS = [(12, [0, 1, 0]), (3, [1, 0, 1])]


def coco_name(split, image_id):
    return f'COCO_{split}2014_{image_id:012d}.jpg'


def write_instances(root, split, table, extra_annotations=()):
    annotations = [
        dict(id=len(table) * 10 + k, image_id=image_id, category_id=cat)
        for k, (image_id, cat) in enumerate(
            (i, c) for i, cats in table.items() for c in cats)
    ]
    annotations += list(extra_annotations)
    data = dict(
        images=[dict(id=i, file_name=coco_name(split, i)) for i in table],
        annotations=annotations,
        categories=CATEGORIES)
    with open(osp.join(root, 'annotations', f'instances_{split}2014.json'),
              'w') as f:
        json.dump(data, f)


@pytest.fixture
def coco_root(tmp_path, write_image):
    root = tmp_path / 'coco'
    (root / 'annotations').mkdir(parents=True)
    for split, table in (('train', TRAIN), ('val', VAL)):
        write_instances(str(root), split, table)
        for k, image_id in enumerate(table):
            write_image(
                str(root / f'{split}2014' / coco_name(split, image_id)), k)
    return str(root)


def test_parser_matrices(coco_root):
    for split, rows in (('train', TRAIN_ROWS), ('val', VAL_ROWS)):
        parsed = load_coco_split(coco_root, split)
        assert parsed.images.tolist() == [
            f'{split}2014/{coco_name(split, i)}' for i, _ in rows
        ]
        np.testing.assert_array_equal(parsed.labels, [r for _, r in rows])
        assert parsed.classes == ('car', 'person', 'bicycle')
        assert parsed.image_dir == ''
        assert parsed.dropped == {'without instance': 1}



def test_prepare_is_byte_identical_and_seed_changes_only_obs(
        coco_root, tmp_path, reprepare):
    same_seed, other_seed = reprepare('coco', coco_root, tmp_path, 9)
    assert same_seed == []
    assert other_seed == ['formatted_train_labels_obs.npy',
                          'formatted_val_labels_obs.npy']


def test_prepare_and_dataset(coco_root, tmp_path, config_dataset):
    out = str(tmp_path / 'out')
    summary = prepare_official('coco', coco_root, out)
    assert summary['train']['kept'] == 4 and summary['train']['listed'] == 5
    assert summary['train']['positives'] == 1.25
    labels = np.load(osp.join(out, 'formatted_train_labels.npy'))
    obs = np.load(osp.join(out, 'formatted_train_labels_obs.npy'))
    np.testing.assert_array_equal(labels, [r for _, r in TRAIN_ROWS])
    np.testing.assert_array_equal(obs, observe_uniform(labels, seed=1200))
    # rows with one positive keep it; the RandomState(1200) pick for id 25
    np.testing.assert_array_equal(
        obs, [[0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 0, 0]])
    assert np.load(osp.join(out, 'formatted_val_images.npy')).tolist() == [
        'val2014/COCO_val2014_000000000012.jpg',
        'val2014/COCO_val2014_000000000003.jpg'
    ]
    with open(osp.join(out, 'classes.txt')) as f:
        assert f.read() == 'car\nperson\nbicycle\n'

    direct = SPMLCOCO(data_root=coco_root, split='test')
    prepared = config_dataset('configs/an/resnet50_coco.py', 'test', out)
    assert direct.metainfo['classes'] == ('car', 'person', 'bicycle')
    for i in range(2):
        a, b = direct.get_data_info(i), prepared.get_data_info(i)
        assert osp.isfile(b['img_path'])
        assert osp.realpath(a['img_path']) == osp.realpath(b['img_path'])
        np.testing.assert_array_equal(a['gt_label'], b['gt_label'])
    assert direct.get_data_info(1)['gt_label'].tolist() == [0, 2]


def test_unknown_category_names_the_annotation(coco_root):
    write_instances(
        coco_root, 'val', VAL,
        [dict(id=777, image_id=3, category_id=90)])
    with pytest.raises(ValueError, match=r'annotations\[3\] \(annotation id '
                       r'777\) has category_id 90.*ids \[1, 2, 3\]'):
        load_coco_split(coco_root, 'val')
    write_instances(
        coco_root, 'val', VAL,
        [dict(id=778, image_id=55, category_id=1)])
    with pytest.raises(ValueError, match=r'annotations\[3\].*image_id 55'):
        load_coco_split(coco_root, 'val')


def test_missing_files_name_path_and_layout(coco_root):
    os.rename(osp.join(coco_root, 'val2014'), osp.join(coco_root, 'v'))
    with pytest.raises(FileNotFoundError,
                       match=r'folder .*val2014 not found\. Expected layout'):
        load_coco_split(coco_root, 'val')
    path = osp.join(coco_root, 'annotations', 'instances_train2014.json')
    os.remove(path)
    with pytest.raises(FileNotFoundError) as info:
        load_coco_split(coco_root, 'train')
    assert path in str(info.value)
    assert 'annotations/instances_{train,val}2014.json' in str(info.value)
