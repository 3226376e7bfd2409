"""Partial labels in the datasets: observed negatives as ``gt_label_neg``."""
import json
import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import (SPMLDataset, SPMLMultiLabelDataset,
                              load_multilabel_annotations, observe_uniform,
                              split_train_val)
from spml_mm.datasets.validation import DatasetError

PACK = dict(type='PackInputs', algorithm_keys=('gt_label_full',
                                                'gt_label_neg'))


def write_interchange(root, train_labels, val_labels, obs=None):
    os.makedirs(root, exist_ok=True)
    for split, labels in (('train', train_labels), ('val', val_labels)):
        names = np.array([f'{split}_{i}.png' for i in range(len(labels))])
        np.save(osp.join(root, f'formatted_{split}_images.npy'), names)
        np.save(osp.join(root, f'formatted_{split}_labels.npy'), labels)
    if obs is not None:
        np.save(osp.join(root, 'formatted_train_labels_obs.npy'), obs)


def infos(dataset):
    return [dataset.get_data_info(k) for k in range(len(dataset))]


@pytest.fixture
def matrices():
    rng = np.random.RandomState(0)
    train = (rng.rand(20, 6) < 0.4).astype(float)
    train[np.arange(20), rng.randint(0, 6, 20)] = 1
    val = np.eye(6)[[0, 1, 2, 3, 4, 5]]
    return train, val


def test_stored_observed_negatives(tmp_path, matrices):
    train_labels, val_labels = matrices
    obs = observe_uniform(train_labels, num_pos=1, num_neg=3, seed=7)
    write_interchange(str(tmp_path), train_labels, val_labels, obs)
    train_idx, _ = split_train_val(20)
    dataset = SPMLDataset(str(tmp_path), split='train')
    for info, i in zip(infos(dataset), train_idx):
        assert info['gt_label'].tolist() == np.flatnonzero(
            obs[i] == 1).tolist()
        assert info['gt_label_neg'].tolist() == np.flatnonzero(
            obs[i] == -1).tolist()
        assert set(info['gt_label_neg']).isdisjoint(info['gt_label_full'])
    assert any(len(info['gt_label_neg']) == 3 for info in infos(dataset))
    # validation and test samples carry the full labels only
    val = SPMLDataset(str(tmp_path), split='val')
    assert 'gt_label_neg' not in val.get_data_info(0)


def test_protocol_observes_num_neg_negatives(tmp_path, matrices):
    train_labels, val_labels = matrices
    write_interchange(str(tmp_path), train_labels, val_labels)
    single = infos(SPMLDataset(str(tmp_path), split='train'))
    partial = infos(SPMLDataset(str(tmp_path), split='train', num_neg=2))
    expected = observe_uniform(train_labels, num_pos=1, num_neg=2,
                               seed=1200)
    train_idx, _ = split_train_val(20)
    for a, b, i in zip(single, partial, train_idx):
        # the same observed positive as the single-positive protocol
        assert a['gt_label'].tolist() == b['gt_label'].tolist()
        assert a['gt_label_neg'].tolist() == []
        negatives = np.flatnonzero(train_labels[i] == 0)
        assert len(b['gt_label_neg']) == min(2, len(negatives))
        assert b['gt_label_neg'].tolist() == np.flatnonzero(
            expected[i] == -1).tolist()
    # several positives need the single-positive check switched off
    with pytest.raises(ValueError, match='num_pos=2 .*single_positive'):
        SPMLDataset(str(tmp_path), split='train', num_pos=2)
    two = infos(SPMLDataset(str(tmp_path), split='train', num_pos=2,
                            single_positive=False))
    assert [len(info['gt_label']) for info in two] == [
        min(2, int(train_labels[i].sum())) for i in train_idx]


def test_pack_inputs_must_keep_the_negatives(tmp_path, matrices):
    write_interchange(str(tmp_path), *matrices)
    drop = [dict(type='PackInputs', algorithm_keys=('gt_label_full', ))]
    with pytest.raises(ValueError, match="PackInputs drops them; add "
                       "'gt_label_neg' to its algorithm_keys"):
        SPMLDataset(str(tmp_path), split='train', num_neg=2, pipeline=drop)
    # nothing to drop without negatives, and full labels observe none
    SPMLDataset(str(tmp_path), split='train', pipeline=drop)
    SPMLDataset(str(tmp_path), split='train', num_neg=2, full_labels=True,
                pipeline=drop)
    dataset = SPMLDataset(str(tmp_path), split='train', num_neg=2,
                          pipeline=[PACK])
    sample = dataset[0]['data_samples']
    assert sample.gt_label_neg.tolist() == dataset.get_data_info(
        0)['gt_label_neg'].tolist()


def write_json(path, entries, classes=('cat', 'dog', 'car', 'tree')):
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=list(classes)),
                       data_list=entries), f)


def test_custom_annotations_with_observed_negatives(tmp_path):
    root = str(tmp_path)
    entries = [
        dict(img_path='a.jpg', gt_label=[0], gt_label_neg=[1, 2]),
        dict(img_path='b.jpg', gt_label=[1, 3]),  # nothing known absent
        dict(img_path='c.jpg', gt_label=[], gt_label_neg=[0]),  # dropped
        dict(img_path='d.jpg', gt_label=[2], gt_label_neg=[3]),
        dict(img_path='e.jpg', gt_label=[3], gt_label_neg=[]),
    ]
    write_json(osp.join(root, 'train.json'), entries)
    write_json(osp.join(root, 'test.json'),
               [dict(img_path='t.jpg', gt_label=[0, 2])])
    parsed = load_multilabel_annotations(osp.join(root, 'train.json'))
    assert parsed.images.tolist() == ['a.jpg', 'b.jpg', 'd.jpg', 'e.jpg']
    np.testing.assert_array_equal(parsed.observed, [[1, -1, -1, 0],
                                                    [0, 1, 0, 1],
                                                    [0, 0, 1, -1],
                                                    [0, 0, 0, 1]])
    np.testing.assert_array_equal(parsed.labels, parsed.observed > 0)
    # the file's labels are the observation: no protocol draw
    train = SPMLMultiLabelDataset(data_root=root, split='train',
                                  val_frac=0., single_positive=False,
                                  pipeline=[])
    assert [(i['gt_label'].tolist(), i['gt_label_neg'].tolist())
            for i in infos(train)] == [([0], [1, 2]), ([1, 3], []),
                                       ([2], [3]), ([3], [])]
    with pytest.raises(DatasetError, match='2 observed positives'):
        SPMLMultiLabelDataset(data_root=root, split='train', val_frac=0.)
    # a file without gt_label_neg holds full labels, as before
    parsed = load_multilabel_annotations(osp.join(root, 'test.json'))
    assert parsed.observed is None


def test_custom_annotations_checks_the_negatives(tmp_path):
    path = str(tmp_path / 'train.json')
    write_json(path, [
        dict(img_path='a.jpg', gt_label=[0], gt_label_neg=[0, 1]),
        dict(img_path='b.jpg', gt_label=[1], gt_label_neg=[4]),
        dict(img_path='c.jpg', gt_label=[1], gt_label_neg='x'),
    ])
    with pytest.raises(DatasetError) as err:
        load_multilabel_annotations(path)
    assert err.value.problems == [
        f'{path}: data_list[0] (a.jpg) lists classes [0] in gt_label and '
        'gt_label_neg.',
        f'{path}: data_list[1] (b.jpg) has gt_label_neg [4]; labels are '
        'class indices in [0, 4).',
        f"{path}: data_list[2] (c.jpg) has gt_label_neg 'x'; labels are "
        'class indices in [0, 4).',
    ]
