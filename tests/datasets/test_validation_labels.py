"""Validation on the labels a user has: ``val_labels``, ``val_full_subset``
and partial annotations evaluated on their known entries."""
import os.path as osp

import numpy as np
import pytest
import torch

from spml_mm.datasets import (SPMLDataset, SPMLMultiLabelDataset,
                              observe_uniform, split_train_val)
from spml_mm.evaluation import SPMLAveragePrecision
from tests.datasets.test_partial_annotations import (infos,
                                                     write_interchange,
                                                     write_json)

PACK_NEG = [dict(type='PackInputs', algorithm_keys=('gt_label_neg', ))]


@pytest.fixture
def train_labels():
    rng = np.random.RandomState(0)
    labels = (rng.rand(20, 6) < 0.4).astype(float)
    labels[np.arange(20), rng.randint(0, 6, 20)] = 1
    return labels


def known(info, num_classes=6):
    """An info's labels as +1 / -1 / 0 (unknown)."""
    row = np.zeros(num_classes, int)
    if 'gt_label_neg' in info:
        row[info['gt_label_neg']] = -1
    else:
        row[:] = -1
    row[info['gt_label']] = 1
    return row


def test_observed_val_labels_are_the_training_draw(tmp_path, train_labels):
    write_interchange(str(tmp_path), train_labels, np.eye(6))
    _, val_idx = split_train_val(20)
    full = SPMLDataset(str(tmp_path), split='val')
    assert [known(i).tolist() for i in infos(full)] == [
        (2 * train_labels[i] - 1).tolist() for i in val_idx]
    for num_neg in (0, 2):
        val = SPMLDataset(str(tmp_path), split='val', val_labels='observed',
                          num_neg=num_neg, pipeline=PACK_NEG)
        rows = np.array([known(i) for i in infos(val)])
        truth = train_labels[val_idx]
        # by hand: one positive and num_neg negatives a row (as many as
        # the image has), all true
        assert ((rows == 1).sum(1) == 1).all()
        assert ((rows == -1).sum(1) == np.minimum(
            num_neg, (truth == 0).sum(1))).all()
        assert (truth[rows == 1] == 1).all() and (truth[rows == -1] == 0).all()
        # and the very draw of the training images (one official split)
        drawn = observe_uniform(train_labels, 1, num_neg, seed=1200)
        assert rows.tolist() == drawn[val_idx].tolist()
    # other splits ignore it
    test = SPMLDataset(str(tmp_path), split='test', val_labels='observed')
    assert all('gt_label_neg' not in i for i in infos(test))


def test_an_unobserved_label_changes_nothing(tmp_path, train_labels):
    """The true label behind an unknown entry reaches neither the samples
    nor the metric."""
    _, val_idx = split_train_val(20)
    obs = observe_uniform(train_labels, 1, 2, seed=3)
    row = val_idx[0]
    hidden = np.flatnonzero(obs[row] == 0)[0]
    metrics = []
    for value in (0, 1):
        labels = train_labels.copy()
        labels[row, hidden] = value
        root = str(tmp_path / str(value))
        write_interchange(root, labels, np.eye(6), obs)
        val = SPMLDataset(root, split='val', val_labels='observed',
                          pipeline=PACK_NEG)
        metric = SPMLAveragePrecision()
        metric.process(None, [
            dict(pred_score=torch.linspace(0, 1, 6).roll(k),
                 gt_label=torch.as_tensor(val[k]['data_samples'].gt_label),
                 gt_label_neg=val[k]['data_samples'].gt_label_neg)
            for k in range(len(val))])
        metrics.append((metric.evaluate(len(val)),
                        [known(i).tolist() for i in infos(val)]))
    assert metrics[0] == metrics[1]


def test_a_drawn_fully_labelled_subset(tmp_path, train_labels):
    write_interchange(str(tmp_path), train_labels, np.eye(6))
    _, val_idx = split_train_val(20)
    order = np.random.RandomState(5).permutation(len(val_idx))
    paths = {}
    for size in (1, 3):
        chosen = np.sort(val_idx[order[:size]])
        alone = SPMLDataset(str(tmp_path), split='val', val_full_subset=size,
                            val_subset_seed=5)
        paths[size] = [i['img_path'] for i in infos(alone)]
        assert paths[size] == [osp.join(str(tmp_path), f'train_{i}.png')
                               for i in chosen]
        assert [known(i).tolist() for i in infos(alone)] == [
            (2 * train_labels[i] - 1).tolist() for i in chosen]
        # the rest kept with its observed labels
        mixed = SPMLDataset(str(tmp_path), split='val', val_full_subset=size,
                            val_subset_seed=5, val_labels='observed',
                            pipeline=PACK_NEG)
        drawn = observe_uniform(train_labels, seed=1200)
        assert [known(i).tolist() for i in infos(mixed)] == [
            (2 * train_labels[i] - 1 if i in chosen else drawn[i]).tolist()
            for i in val_idx]
    # a smaller subset is part of a larger one
    assert set(paths[1]) < set(paths[3])
    with pytest.raises(ValueError, match='val_full_subset=5 but the val '
                       'split has 4 images'):
        SPMLDataset(str(tmp_path), split='val', val_full_subset=5)


def test_a_listed_fully_labelled_subset(tmp_path, train_labels):
    write_interchange(str(tmp_path), train_labels, np.eye(6))
    _, val_idx = split_train_val(20)
    names = [f'train_{val_idx[2]}.png', f'{tmp_path.name}/train_{val_idx[0]}'
             '.png']
    val = SPMLDataset(str(tmp_path), split='val', val_full_subset=names)
    assert [i['img_path'] for i in infos(val)] == [
        osp.join(str(tmp_path), f'train_{k}.png')
        for k in (val_idx[0], val_idx[2])]
    train_image = f'train_{np.setdiff1d(np.arange(20), val_idx)[0]}.png'
    with pytest.raises(ValueError, match=f"'{train_image}' names 0 "
                       'validation images'):
        SPMLDataset(str(tmp_path), split='val',
                    val_full_subset=[train_image])
    with pytest.raises(ValueError, match='number of images >= 1 or a list'):
        SPMLDataset(str(tmp_path), split='val', val_full_subset=0)
    with pytest.raises(ValueError, match="val_labels must be None or one of "
                       r"\('full', 'observed'\), got 'clean'"):
        SPMLDataset(str(tmp_path), split='val', val_labels='clean')


def test_pack_inputs_must_keep_the_unknowns_apart(tmp_path, train_labels):
    write_interchange(str(tmp_path), train_labels, np.eye(6))
    with pytest.raises(ValueError, match='val split: the images are '
                       'evaluated on partly unknown labels.*PackInputs drops '
                       "them; add 'gt_label_neg' to its algorithm_keys, e.g. "
                       r"dict\(type='PackInputs', algorithm_keys="
                       r"\('gt_label_neg',\)\)"):
        SPMLDataset(str(tmp_path), split='val', val_labels='observed',
                    pipeline=[dict(type='PackInputs')])
    val = SPMLDataset(str(tmp_path), split='val', val_labels='observed',
                      pipeline=PACK_NEG)
    assert val[0]['data_samples'].gt_label_neg.tolist() == []


def test_partial_annotations_evaluate_their_known_entries(tmp_path):
    root = str(tmp_path)
    write_json(osp.join(root, 'train.json'), [
        dict(img_path=f'{k}.jpg', gt_label=[k % 4],
             gt_label_neg=[(k + 1) % 4]) for k in range(10)])
    write_json(osp.join(root, 'test.json'), [
        dict(img_path='t0.jpg', gt_label=[0, 2], gt_label_neg=[1]),
        dict(img_path='t1.jpg', gt_label=[3])])
    _, val_idx = split_train_val(10)
    common = dict(data_root=root, pipeline=PACK_NEG)
    test = SPMLMultiLabelDataset(split='test', **common)
    assert [known(i, 4).tolist() for i in infos(test)] == [[1, -1, 1, 0],
                                                          [0, 0, 0, 1]]
    val = SPMLMultiLabelDataset(split='val', **common)
    assert [known(i, 4).tolist() for i in infos(val)] == [
        [1 if c == k % 4 else -1 if c == (k + 1) % 4 else 0
         for c in range(4)] for k in val_idx]
    # val_labels='full': every class not listed positive is a negative
    listed = SPMLMultiLabelDataset(split='val', val_labels='full', **common)
    assert [known(i, 4).tolist() for i in infos(listed)] == [
        [1 if c == k % 4 else -1 for c in range(4)] for k in val_idx]
