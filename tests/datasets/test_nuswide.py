import os
import os.path as osp

import numpy as np
import pytest

from spml_mm.datasets import (SPMLNUSWIDE, load_nuswide_split,
                              observe_uniform, prepare_official)

CONCEPTS = ('animal', 'sky', 'water')
# (official list entry, labels, on disk)
TRAIN = [('animal\\0001_11.jpg', (1, 0, 0), True),
         ('sky\\0002_22.jpg', (0, 1, 1), True),
         ('sky\\0003_33.jpg', (0, 0, 0), True),  # no positive
         ('water\\0004_44.jpg', (0, 0, 1), False),  # not downloaded
         ('animal\\0005_55.jpg', (1, 1, 0), True)]
TEST = [('water\\0006_66.jpg', (0, 0, 1), True),
        ('animal\\0007_77.jpg', (1, 0, 1), True)]
# hand-derived: list order, backslashes turned into /, the two dropped
TRAIN_ROWS = [('animal/0001_11.jpg', [1, 0, 0]),
              ('sky/0002_22.jpg', [0, 1, 1]),
              ('animal/0005_55.jpg', [1, 1, 0])]


def label_path(root, concept, tag):
    return osp.join(root, 'TrainTestLabels', f'Labels_{concept}_{tag}.txt')


@pytest.fixture
def nus_root(tmp_path, write_image):
    root = tmp_path / 'nus'
    (root / 'ImageList').mkdir(parents=True)
    (root / 'TrainTestLabels').mkdir()
    (root / 'Concepts81.txt').write_text('\n'.join(CONCEPTS) + '\n')
    for tag, rows in (('Train', TRAIN), ('Test', TEST)):
        # official files use Windows line ends
        (root / 'ImageList' / f'{tag}Imagelist.txt').write_text(
            ''.join(f'{entry}\r\n' for entry, _, _ in rows))
        for col, concept in enumerate(CONCEPTS):
            with open(label_path(str(root), concept, tag), 'w') as f:
                f.write(''.join(f'{labels[col]} \n' for _, labels, _ in rows))
        for k, (entry, _, on_disk) in enumerate(rows):
            if on_disk:
                write_image(
                    str(root / 'Flickr' / entry.replace('\\', '/')), k)
    return str(root)


def test_parser_matrices(nus_root):
    train = load_nuswide_split(nus_root, 'train')
    assert train.images.tolist() == [path for path, _ in TRAIN_ROWS]
    np.testing.assert_array_equal(train.labels, [r for _, r in TRAIN_ROWS])
    assert train.classes == CONCEPTS and train.image_dir == 'Flickr'
    assert train.dropped == {'without positive': 1, 'missing on disk': 1}
    test = load_nuswide_split(nus_root, 'val')
    assert test.images.tolist() == ['water/0006_66.jpg', 'animal/0007_77.jpg']
    np.testing.assert_array_equal(test.labels, [[0, 0, 1], [1, 0, 1]])
    assert test.dropped == {'without positive': 0, 'missing on disk': 0}



def test_prepare_is_byte_identical_and_seed_changes_only_obs(
        nus_root, tmp_path, reprepare):
    same_seed, other_seed = reprepare('nuswide', nus_root, tmp_path, 3)
    assert same_seed == []
    assert other_seed == ['formatted_train_labels_obs.npy',
                          'formatted_val_labels_obs.npy']


def test_prepare_and_dataset(nus_root, tmp_path, config_dataset):
    out = str(tmp_path / 'out')
    summary = prepare_official('nuswide', nus_root, out)
    assert summary['train']['listed'] == 5 and summary['train']['kept'] == 3
    labels = np.load(osp.join(out, 'formatted_train_labels.npy'))
    obs = np.load(osp.join(out, 'formatted_train_labels_obs.npy'))
    np.testing.assert_array_equal(obs, observe_uniform(labels, seed=1200))
    # row 0 has one positive; rows 1 and 2: the RandomState(1200) picks
    np.testing.assert_array_equal(obs, [[1, 0, 0], [0, 1, 0], [1, 0, 0]])
    assert osp.realpath(osp.join(out, 'images')) == osp.realpath(
        osp.join(nus_root, 'Flickr'))

    direct = SPMLNUSWIDE(data_root=nus_root, split='test')
    prepared = config_dataset('configs/an/resnet50_nuswide.py', 'test', out)
    for i in range(2):
        a, b = direct.get_data_info(i), prepared.get_data_info(i)
        assert osp.isfile(b['img_path'])
        assert osp.realpath(a['img_path']) == osp.realpath(b['img_path'])
        np.testing.assert_array_equal(a['gt_label'], b['gt_label'])
    assert direct.metainfo['classes'] == CONCEPTS


def test_label_file_lines_must_match_the_list(nus_root):
    path = label_path(nus_root, 'sky', 'Train')
    lines = open(path).read().splitlines()
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:4]) + '\n')
    with pytest.raises(ValueError, match=r'Labels_sky_Train\.txt ends after '
                       r'4 lines but .*TrainImagelist\.txt lists 5 images'):
        load_nuswide_split(nus_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines + ['0']) + '\n')
    with pytest.raises(ValueError,
                       match=r'Labels_sky_Train\.txt, line 6: one line more'):
        load_nuswide_split(nus_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:2] + ['2'] + lines[3:]) + '\n')
    with pytest.raises(ValueError, match=r'Labels_sky_Train\.txt, line 3: '
                       r"expected 0 or 1, got '2'"):
        load_nuswide_split(nus_root, 'train')


def test_missing_files_name_path_and_layout(nus_root):
    path = label_path(nus_root, 'water', 'Test')
    os.remove(path)
    with pytest.raises(FileNotFoundError) as info:
        load_nuswide_split(nus_root, 'val')
    assert path in str(info.value)
    assert 'TrainTestLabels/Labels_<concept>_{Train,Test}.txt' in str(
        info.value)
    os.rename(osp.join(nus_root, 'Flickr'), osp.join(nus_root, 'images'))
    with pytest.raises(FileNotFoundError, match='Flickr not found'):
        load_nuswide_split(nus_root, 'train')
