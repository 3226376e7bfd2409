import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import (SPMLCUB, load_cub_split, observe_uniform,
                              prepare_official, split_train_val)

ATTRIBUTES = ('has_bill_shape::curved', 'has_wing_color::blue',
              'has_size::small')
# images.txt order: (path, is_training_image, is_present of the attributes)
IMAGES = [('001.Albatross/a_0001.jpg', 1, (1, 0, 1)),
          ('001.Albatross/a_0002.jpg', 0, (0, 1, 0)),
          ('002.Auklet/b_0001.jpg', 1, (1, 1, 0)),
          ('002.Auklet/b_0002.jpg', 0, (0, 0, 1)),
          ('002.Auklet/b_0003.jpg', 1, (0, 1, 1)),
          # nothing present: kept, as by the community code's format_cub.py
          ('003.Gull/c_0001.jpg', 1, (0, 0, 0))]
# lines of the official file that carry an extra field (image, attribute)
EXTRA_FIELD = {(3, 2), (5, 3)}


def attribute_lines():
    lines = []
    for i, (_, _, present) in enumerate(IMAGES, 1):
        for a, value in enumerate(present, 1):
            extra = ' 0' if (i, a) in EXTRA_FIELD else ''
            lines.append(f'{i} {a} {value} 3{extra} 12.5')
    return lines


@pytest.fixture
def cub_root(tmp_path, write_image):
    root = tmp_path / 'CUB'
    cub = root / 'CUB_200_2011'
    (cub / 'attributes').mkdir(parents=True)
    (root / 'attributes.txt').write_text(''.join(
        f'{a} {name}\n' for a, name in enumerate(ATTRIBUTES, 1)))
    (cub / 'images.txt').write_text(''.join(
        f'{i} {path}\n' for i, (path, _, _) in enumerate(IMAGES, 1)))
    (cub / 'train_test_split.txt').write_text(''.join(
        f'{i} {flag}\n' for i, (_, flag, _) in enumerate(IMAGES, 1)))
    (cub / 'attributes' / 'image_attribute_labels.txt').write_text(
        '\n'.join(attribute_lines()) + '\n')
    for k, (path, _, _) in enumerate(IMAGES):
        write_image(str(cub / 'images' / path), k)
    return str(root)


def labels_path(root):
    return osp.join(root, 'CUB_200_2011', 'attributes',
                    'image_attribute_labels.txt')


def test_parser_matrices(cub_root):
    train = load_cub_split(cub_root, 'train')
    # the community code's image list: every image of the split
    assert train.images.tolist() == [
        '001.Albatross/a_0001.jpg', '002.Auklet/b_0001.jpg',
        '002.Auklet/b_0003.jpg', '003.Gull/c_0001.jpg'
    ]
    np.testing.assert_array_equal(
        train.labels, [[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 0]])
    assert train.classes == ATTRIBUTES
    assert train.image_dir == 'CUB_200_2011/images'
    assert train.dropped == {}
    test = load_cub_split(cub_root, 'val')
    assert test.images.tolist() == [
        '001.Albatross/a_0002.jpg', '002.Auklet/b_0002.jpg'
    ]
    np.testing.assert_array_equal(test.labels, [[0, 1, 0], [0, 0, 1]])



def test_prepare_is_byte_identical_and_seed_changes_only_obs(
        cub_root, tmp_path, reprepare):
    same_seed, other_seed = reprepare('cub', cub_root, tmp_path, 2)
    assert same_seed == []
    # the official test rows of the fixture have one positive each
    assert other_seed == ['formatted_train_labels_obs.npy']


def test_prepare_and_dataset(cub_root, tmp_path, config_dataset):
    out = str(tmp_path / 'out')
    summary = prepare_official('cub', cub_root, out)
    assert summary['train']['positives'] == 1.5
    assert summary['train']['protocol'] == 'train 3, val 1'
    labels = np.load(osp.join(out, 'formatted_train_labels.npy'))
    obs = np.load(osp.join(out, 'formatted_train_labels_obs.npy'))
    np.testing.assert_array_equal(obs, observe_uniform(labels, seed=1200))
    # one observed positive per image that has one; none for the gull
    assert (obs == 1).sum(1).tolist() == [1, 1, 1, 0]
    assert (obs[labels == 0] == 0).all()
    direct = SPMLCUB(data_root=cub_root, split='test')
    prepared = config_dataset('configs/an/resnet50_cub.py', 'test', out)
    assert direct.metainfo['classes'] == ATTRIBUTES
    for i in range(2):
        a, b = direct.get_data_info(i), prepared.get_data_info(i)
        assert osp.isfile(b['img_path'])
        assert osp.realpath(a['img_path']) == osp.realpath(b['img_path'])
        np.testing.assert_array_equal(a['gt_label'], b['gt_label'])


def test_attribute_rows_are_counted(cub_root):
    path = labels_path(cub_root)
    lines = attribute_lines()
    # a missing row: line 7 now holds image 3, attribute 2
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:6] + lines[7:]) + '\n')
    with pytest.raises(ValueError, match=r'image_attribute_labels\.txt, line '
                       r'7: expected `3 1 <0\|1> \.\.\.`'):
        load_cub_split(cub_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:-1]) + '\n')
    with pytest.raises(ValueError, match=r'has 17 rows, expected 6 images '
                       r'\(images\.txt\) x 3 attributes \(attributes\.txt\) '
                       r'= 18; the row after line 17 is missing \(image 6, '
                       r'attribute 3\)'):
        load_cub_split(cub_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines + ['7 1 0 3 1.0']) + '\n')
    with pytest.raises(ValueError, match=r'line 19: one row more than'):
        load_cub_split(cub_root, 'train')


def test_split_file_must_follow_images_txt(cub_root):
    path = osp.join(cub_root, 'CUB_200_2011', 'train_test_split.txt')
    with open(path, 'w') as f:
        f.write('1 1\n3 1\n2 0\n4 0\n5 1\n6 1\n')
    with pytest.raises(ValueError, match=r'train_test_split\.txt, line 2: '
                       r'image 3 where .*images\.txt lists 2'):
        load_cub_split(cub_root, 'train')


def test_missing_files_name_path_and_layout(cub_root):
    path = osp.join(cub_root, 'CUB_200_2011', 'images.txt')
    os.remove(path)
    with pytest.raises(FileNotFoundError) as info:
        load_cub_split(cub_root, 'train')
    assert path in str(info.value)
    assert 'train_test_split.txt' in str(info.value)
    with pytest.raises(FileNotFoundError, match='attributes.txt not found'):
        load_cub_split(osp.join(cub_root, 'CUB_200_2011'), 'train')


def test_image_without_attribute_keeps_the_community_split(cub_root):
    """The gull image without a present attribute stays in the list, so the
    protocol's split of the four official train images is the community
    code's (dropping it made the split of three images hold out image 1
    instead). It falls in the validation split, where it is evaluated
    with all-negative labels; as a training image it is left out, since it
    cannot carry an observed positive."""
    assert split_train_val(4)[1].tolist() == [3]
    assert split_train_val(3)[1].tolist() == [1]
    val = SPMLCUB(data_root=cub_root, split='val')
    assert [osp.basename(val.get_data_info(i)['img_path'])
            for i in range(len(val))] == ['c_0001.jpg']
    assert val.get_data_info(0)['gt_label'].tolist() == []
    train = SPMLCUB(data_root=cub_root, split='train')
    assert len(train) == 3
    # every official train image in the training split: the gull is the
    # one left out
    everything = SPMLCUB(data_root=cub_root, split='train', val_frac=0.)
    assert [osp.basename(everything.get_data_info(i)['img_path'])
            for i in range(len(everything))] == [
                'a_0001.jpg', 'b_0001.jpg', 'b_0003.jpg']
