import json
import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import (SPMLDataset, SPMLMultiLabelDataset,
                              load_multilabel_annotations)

CLASSES = ['cat', 'dog', 'car', 'tree']
TRAIN = [('a.jpg', [0]), ('b.jpg', [1, 2]), ('c.jpg', []), ('d.jpg', [2]),
         ('e.jpg', [0, 3]), ('f.jpg', [3]), ('g.jpg', [1])]
TEST = [('t1.jpg', [3]), ('t2.jpg', [0, 1])]


def write_ann(path, items, classes=CLASSES):
    data = dict(data_list=[dict(img_path=p, gt_label=g) for p, g in items])
    if classes is not None:
        data['metainfo'] = dict(classes=classes)
    with open(path, 'w') as f:
        json.dump(data, f)


def matrix(items):
    labels = np.zeros((len(items), len(CLASSES)))
    for i, (_, indices) in enumerate(items):
        labels[i, indices] = 1
    return labels


@pytest.fixture
def custom_root(tmp_path, write_image):
    root = tmp_path / 'custom'
    root.mkdir()
    write_ann(str(root / 'train.json'), TRAIN)
    write_ann(str(root / 'test.json'), TEST)
    for k, (path, _) in enumerate(TRAIN + TEST):
        write_image(str(root / 'images' / path), k)
    return str(root)


def test_parser_drops_images_without_label(custom_root):
    parsed = load_multilabel_annotations(osp.join(custom_root, 'train.json'))
    kept = [item for item in TRAIN if item[1]]
    assert parsed.images.tolist() == [p for p, _ in kept]
    np.testing.assert_array_equal(parsed.labels, matrix(kept))
    assert parsed.classes == tuple(CLASSES)
    assert parsed.dropped == {'without positive': 1}


def test_same_protocol_as_the_interchange_format(custom_root, tmp_path):
    # the same matrices in the interchange format give the same samples
    npy = str(tmp_path / 'npy')
    os.makedirs(npy)
    for split, items in (('train', [t for t in TRAIN if t[1]]), ('val', TEST)):
        np.save(osp.join(npy, f'formatted_{split}_images.npy'),
                np.array([p for p, _ in items]))
        np.save(osp.join(npy, f'formatted_{split}_labels.npy'), matrix(items))
    for split in ('train', 'val', 'test'):
        custom = SPMLMultiLabelDataset(
            data_root=custom_root, data_prefix='images', split=split,
            val_frac=0.34)
        reference = SPMLDataset(
            data_root=npy, data_prefix='', split=split, val_frac=0.34,
            classes=CLASSES)
        assert custom.metainfo['classes'] == tuple(CLASSES)
        assert len(custom) == len(reference) == dict(
            train=4, val=2, test=2)[split]
        for i in range(len(custom)):
            a, b = custom.get_data_info(i), reference.get_data_info(i)
            assert osp.basename(a['img_path']) == osp.basename(b['img_path'])
            assert osp.isfile(a['img_path'])
            np.testing.assert_array_equal(a['gt_label'], b['gt_label'])
            if split == 'train':
                np.testing.assert_array_equal(a['gt_label_full'],
                                              b['gt_label_full'])
                assert len(a['gt_label']) == 1
                assert a['gt_label'][0] in a['gt_label_full']


def test_example_config(custom_root, config_dataset):
    dataset = config_dataset('configs/an/resnet50_custom.py', 'test',
                             custom_root)
    assert isinstance(dataset, SPMLMultiLabelDataset)
    assert [osp.basename(dataset.get_data_info(i)['img_path'])
            for i in range(2)] == ['t1.jpg', 't2.jpg']
    assert dataset.get_data_info(1)['gt_label'].tolist() == [0, 1]


def test_bad_annotations(custom_root):
    path = osp.join(custom_root, 'train.json')
    write_ann(path, TRAIN[:3] + [('x.jpg', [1, 4])])
    with pytest.raises(ValueError, match=r'data_list\[3\] \(x\.jpg\) has '
                       r'gt_label \[1, 4\]; .*\[0, 4\)'):
        load_multilabel_annotations(path)
    write_ann(path, TRAIN, classes=None)
    with pytest.raises(ValueError, match='no `metainfo.classes`'):
        load_multilabel_annotations(path)
    # classes given to the dataset instead
    dataset = SPMLMultiLabelDataset(
        data_root=custom_root, split='test', classes=list('wxyz'))
    assert dataset.metainfo['classes'] == tuple('wxyz')
    with pytest.raises(FileNotFoundError, match='nope.json not found'):
        SPMLMultiLabelDataset(
            data_root=custom_root, split='test', test_ann_file='nope.json')
