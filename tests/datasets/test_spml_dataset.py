import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import SPMLDataset, observe_uniform, split_train_val


def write_interchange(root, train_labels, val_labels, obs=None):
    os.makedirs(root, exist_ok=True)
    for split, labels in (('train', train_labels), ('val', val_labels)):
        names = np.array([f'{split}_{i}.png' for i in range(len(labels))])
        np.save(osp.join(root, f'formatted_{split}_images.npy'), names)
        np.save(osp.join(root, f'formatted_{split}_labels.npy'), labels)
    if obs is not None:
        np.save(osp.join(root, 'formatted_train_labels_obs.npy'), obs)


@pytest.fixture
def matrices():
    rng = np.random.RandomState(0)
    train = (rng.rand(20, 4) < 0.5).astype(float)
    train[np.arange(20), rng.randint(0, 4, 20)] = 1
    val = np.eye(4)[[0, 1, 2, 3, 0, 1]]
    return train, val


def test_splits_follow_the_protocol(tmp_path, matrices):
    train_labels, val_labels = matrices
    write_interchange(str(tmp_path), train_labels, val_labels)
    train_idx, val_idx = split_train_val(20, 0.2, 1200)
    observed = observe_uniform(train_labels, seed=1200)

    train = SPMLDataset(str(tmp_path), split='train', data_prefix='imgs')
    assert len(train) == len(train_idx) == 16
    for k, i in enumerate(train_idx):
        info = train.get_data_info(k)
        assert info['sample_idx'] == k
        assert info['img_path'] == osp.join(str(tmp_path), 'imgs',
                                            f'train_{i}.png')
        np.testing.assert_array_equal(info['gt_label'],
                                      np.flatnonzero(observed[i] == 1))
        np.testing.assert_array_equal(info['gt_label_full'],
                                      np.flatnonzero(train_labels[i]))

    val = SPMLDataset(str(tmp_path), split='val')
    assert len(val) == 4
    for k, i in enumerate(val_idx):
        info = val.get_data_info(k)
        np.testing.assert_array_equal(info['gt_label'],
                                      np.flatnonzero(train_labels[i]))
        assert 'gt_label_full' not in info

    test = SPMLDataset(str(tmp_path), split='test')
    assert len(test) == 6
    np.testing.assert_array_equal(test.get_data_info(5)['gt_label'], [1])
    assert test.metainfo['classes'] == ('class_0', 'class_1', 'class_2',
                                        'class_3')


def test_stored_observed_labels_and_full_labels(tmp_path, matrices):
    train_labels, val_labels = matrices
    obs = np.zeros_like(train_labels)
    first = train_labels.argmax(1)
    obs[np.arange(20), first] = 1
    write_interchange(str(tmp_path), train_labels, val_labels, obs)
    train_idx, _ = split_train_val(20)
    ds = SPMLDataset(str(tmp_path), split='train')
    assert [int(ds.get_data_info(k)['gt_label'][0])
            for k in range(len(ds))] == first[train_idx].tolist()
    full = SPMLDataset(str(tmp_path), split='train', full_labels=True)
    np.testing.assert_array_equal(
        full.get_data_info(0)['gt_label'],
        np.flatnonzero(train_labels[train_idx[0]]))


def test_class_names(tmp_path, matrices):
    write_interchange(str(tmp_path), *matrices)
    with open(tmp_path / 'classes.txt', 'w') as f:
        f.write('cat\ndog\nbird\nfish\n')
    assert SPMLDataset(str(tmp_path), split='test').metainfo['classes'] == (
        'cat', 'dog', 'bird', 'fish')
    with pytest.raises(ValueError, match='3 class names .* 4 columns'):
        SPMLDataset(str(tmp_path), split='test', classes=['a', 'b', 'c'])


def test_missing_file_names_path_and_fix(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        SPMLDataset(str(tmp_path), split='train')
    assert 'formatted_train_images.npy' in str(err.value)
    assert 'prepare_spml.py' in str(err.value)


def test_rows_without_positive(tmp_path, matrices):
    """An image without a positive label (the community code keeps such
    CUB images) is evaluated, and left out of training; the split and the
    observations of the other images do not move."""
    train_labels, val_labels = matrices
    train_labels, val_labels = train_labels.copy(), val_labels.copy()
    train_idx, _ = split_train_val(20)
    empty = train_idx[2]
    train_labels[empty] = 0
    val_labels[2] = 0
    write_interchange(str(tmp_path), train_labels, val_labels)
    test = SPMLDataset(str(tmp_path), split='test')
    assert len(test) == 6
    assert test.get_data_info(2)['gt_label'].tolist() == []
    train = SPMLDataset(str(tmp_path), split='train')
    assert len(train) == 15
    infos = [train.get_data_info(k) for k in range(len(train))]
    observed = observe_uniform(train_labels, seed=1200)
    assert [osp.basename(info['img_path']) for info in infos] == [
        f'train_{i}.png' for i in train_idx if i != empty]
    assert [info['gt_label'].tolist() for info in infos] == [
        np.flatnonzero(observed[i] == 1).tolist() for i in train_idx
        if i != empty]
    # an image with positives but no observed one is still an error
    obs = observed.copy()
    obs[train_idx[0]] = 0
    np.save(tmp_path / 'formatted_train_labels_obs.npy', obs)
    with pytest.raises(ValueError, match=rf'row {train_idx[0]} '
                       rf'\(train_{train_idx[0]}.png\): no observed '
                       'positive'):
        SPMLDataset(str(tmp_path), split='train')


def test_bad_matrices(tmp_path, matrices):
    train_labels, val_labels = matrices
    write_interchange(str(tmp_path), train_labels, val_labels[:, :3] * 2)
    with pytest.raises(ValueError, match='0/1'):
        SPMLDataset(str(tmp_path), split='test')
    write_interchange(str(tmp_path), train_labels, val_labels[:4])
    np.save(tmp_path / 'formatted_val_images.npy', np.array(['a.png']))
    with pytest.raises(ValueError, match='1 images but labels of shape'):
        SPMLDataset(str(tmp_path), split='test')
    with pytest.raises(ValueError, match='split must be one of'):
        SPMLDataset(str(tmp_path), split='trainval')


def test_empty_split(tmp_path, matrices):
    write_interchange(str(tmp_path), *matrices)
    with pytest.raises(ValueError, match='val split .* is empty'):
        SPMLDataset(str(tmp_path), split='val', val_frac=0.)


def test_demo_dataset(tiny_demo):
    train = SPMLDataset(tiny_demo, split='train')
    assert len(train) == 128
    assert train.metainfo['classes'] == tuple('0123456789')
    labels = np.load(osp.join(tiny_demo, 'formatted_train_labels.npy'))
    assert labels.shape == (160, 10)
    assert 1 <= labels.sum(1).min() and labels.sum(1).max() <= 4
    assert osp.isfile(train.get_data_info(0)['img_path'])


@pytest.mark.parametrize('value', [0.5, float('nan')])
@pytest.mark.parametrize('split', ['train', 'val'])
def test_training_label_errors_name_the_row(tmp_path, matrices, value,
                                            split):
    """A bad value in the official train split (observations drawn by the
    loader) is reported with its row and image, as in the test split."""
    train_labels, val_labels = matrices
    train_labels = train_labels.copy()
    row = split_train_val(20)[0][3]
    train_labels[row, 1] = value
    write_interchange(str(tmp_path), train_labels, val_labels)
    with pytest.raises(ValueError) as err:
        SPMLDataset(str(tmp_path), split=split)
    assert f'row {row} (train_{row}.png): labels hold' in str(err.value)
    assert str(tmp_path) in str(err.value)


def test_image_list_saved_as_object_array_names_the_file(tmp_path,
                                                          matrices):
    write_interchange(str(tmp_path), *matrices)
    path = tmp_path / 'formatted_val_images.npy'
    np.save(path, np.array([f'val_{i}.png' for i in range(6)], dtype=object),
            allow_pickle=True)
    with pytest.raises(ValueError) as err:
        SPMLDataset(str(tmp_path), split='test')
    assert str(path) in str(err.value)
    assert 'object array' in str(err.value)
    assert "dtype=str" in str(err.value)


def test_text_saved_as_npy_is_not_called_a_pickle(tmp_path, matrices):
    """np.load takes any file without the .npy header for a pickle: a text
    file of observed labels was diagnosed as a pickled image list."""
    write_interchange(str(tmp_path), *matrices)
    path = tmp_path / 'formatted_train_labels_obs.npy'
    np.savetxt(path, np.zeros((20, 3)))
    with pytest.raises(ValueError) as err:
        SPMLDataset(str(tmp_path), split='train')
    assert str(err.value) == (
        f"{path} is not a .npy file (it starts with b'0.0000', not "
        "b'\\x93NUMPY'; a text file or a file of another format saved "
        'under this name?); write it with np.save(path, array).')


def test_truncated_label_file_names_the_file(tmp_path, matrices):
    write_interchange(str(tmp_path), *matrices)
    path = tmp_path / 'formatted_val_labels.npy'
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match=f'{path}: cannot be read'):
        SPMLDataset(str(tmp_path), split='test')
