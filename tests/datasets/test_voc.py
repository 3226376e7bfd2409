import os
import os.path as osp
import subprocess
import sys

import numpy as np
import pytest

from spml_mm.datasets import (SPMLVOC, SPMLDataset, load_voc_split,
                              observe_uniform, prepare_official)
from spml_mm.datasets.voc import VOC_CLASSES

C = {name: k for k, name in enumerate(VOC_CLASSES)}
# image id -> {class: label} (classes not named are -1); file order unsorted
TRAIN = {
    '2008_000003': dict(aeroplane=1, person=1, dog=0),
    '2008_000001': dict(dog=1, person=0),
    '2008_000002': dict(cat=0),  # difficult only: no positive, dropped
    '2008_000004': dict(bird=1, cat=1, dog=1),
    '2008_000005': dict(train=1),
}
VAL = {
    '2009_000011': dict(bus=1, car=1),
    '2009_000010': dict(sofa=1, chair=0),
    '2009_000012': dict(),  # no positive: dropped
}
# hand-derived: kept images sorted by file name, positives per row
TRAIN_ROWS = [('2008_000001.jpg', ['dog']),
              ('2008_000003.jpg', ['aeroplane', 'person']),
              ('2008_000004.jpg', ['bird', 'cat', 'dog']),
              ('2008_000005.jpg', ['train'])]
VAL_ROWS = [('2009_000010.jpg', ['sofa']), ('2009_000011.jpg', ['bus', 'car'])]


def expected_matrix(rows):
    labels = np.zeros((len(rows), 20))
    for i, (_, names) in enumerate(rows):
        labels[i, [C[n] for n in names]] = 1
    return labels


@pytest.fixture
def voc_root(tmp_path, write_image):
    root = tmp_path / 'VOCtrainval'
    voc = root / 'VOCdevkit' / 'VOC2012'
    main = voc / 'ImageSets' / 'Main'
    main.mkdir(parents=True)
    for split, table in (('train', TRAIN), ('val', VAL)):
        for cls in VOC_CLASSES:
            # official files pad positives with two spaces
            lines = [f'{image_id} {table[image_id].get(cls, -1):2d}'
                     for image_id in table]
            (main / f'{cls}_{split}.txt').write_text('\n'.join(lines) + '\n')
        for k, image_id in enumerate(table):
            write_image(str(voc / 'JPEGImages' / f'{image_id}.jpg'), k)
    return str(root)


def test_parser_matrices(voc_root):
    train = load_voc_split(voc_root, 'train')
    assert train.images.tolist() == [name for name, _ in TRAIN_ROWS]
    np.testing.assert_array_equal(train.labels, expected_matrix(TRAIN_ROWS))
    assert train.labels.dtype == np.float64
    assert train.classes == VOC_CLASSES
    assert train.image_dir == 'VOCdevkit/VOC2012/JPEGImages'
    assert train.dropped == {'without positive': 1}
    val = load_voc_split(voc_root, 'val')
    assert val.images.tolist() == [name for name, _ in VAL_ROWS]
    np.testing.assert_array_equal(val.labels, expected_matrix(VAL_ROWS))
    # ROOT may be VOC2012 itself
    inner = load_voc_split(osp.join(voc_root, 'VOCdevkit', 'VOC2012'), 'val')
    assert inner.image_dir == 'JPEGImages'
    np.testing.assert_array_equal(inner.labels, val.labels)


def test_prepare_writes_the_interchange_format(voc_root, tmp_path):
    out = str(tmp_path / 'voc')
    summary = prepare_official('voc', voc_root, out)
    images = np.load(osp.join(out, 'formatted_train_images.npy'))
    labels = np.load(osp.join(out, 'formatted_train_labels.npy'))
    obs = np.load(osp.join(out, 'formatted_train_labels_obs.npy'))
    assert images.tolist() == [name for name, _ in TRAIN_ROWS]
    np.testing.assert_array_equal(labels, expected_matrix(TRAIN_ROWS))
    # one observed positive among the true ones, nothing else observed
    assert (obs == 1).sum(1).tolist() == [1, 1, 1, 1]
    assert ((obs == 1) <= (labels == 1)).all() and (obs >= 0).all()
    # single-positive rows: their only positive
    assert obs[0, C['dog']] == 1 and obs[3, C['train']] == 1
    np.testing.assert_array_equal(obs, observe_uniform(labels, seed=1200))
    # the positives RandomState(1200) keeps (pinned: the papers' observations)
    assert np.flatnonzero(obs == 1).tolist() == [
        C['dog'], 20 + C['person'], 40 + C['bird'], 60 + C['train']]
    val_obs = np.load(osp.join(out, 'formatted_val_labels_obs.npy'))
    np.testing.assert_array_equal(
        val_obs, observe_uniform(expected_matrix(VAL_ROWS), seed=1200))
    assert np.flatnonzero(val_obs == 1).tolist() == [C['sofa'], 20 + C['car']]
    with open(osp.join(out, 'classes.txt')) as f:
        assert f.read().split('\n')[:-1] == list(VOC_CLASSES)
    assert osp.realpath(osp.join(out, 'images')) == osp.realpath(
        osp.join(voc_root, 'VOCdevkit', 'VOC2012', 'JPEGImages'))
    assert summary['train'] == dict(
        listed=5,
        kept=4,
        dropped={'without positive': 1},
        positives=1.75,
        protocol='train 3, val 1')
    assert summary['val']['kept'] == 2 and summary['val']['positives'] == 1.5


def test_prepare_is_byte_identical_and_seed_changes_only_obs(
        voc_root, tmp_path, reprepare):
    same_seed, other_seed = reprepare('voc', voc_root, tmp_path, 2)
    assert same_seed == []
    assert other_seed == ['formatted_train_labels_obs.npy',
                          'formatted_val_labels_obs.npy']


def test_dataset_class_matches_prepared_config(voc_root, tmp_path,
                                               config_dataset):
    out = str(tmp_path / 'voc')
    prepare_official('voc', voc_root, out)
    for split in ('train', 'val', 'test'):
        direct = SPMLVOC(data_root=voc_root, split=split)
        prepared = config_dataset('configs/an/resnet50_voc.py', split, out)
        assert isinstance(prepared, SPMLDataset)
        assert direct.metainfo['classes'] == VOC_CLASSES
        assert prepared.metainfo['classes'] == VOC_CLASSES
        assert len(direct) == len(prepared) == dict(
            train=3, val=1, test=2)[split]
        for i in range(len(direct)):
            a, b = direct.get_data_info(i), prepared.get_data_info(i)
            assert osp.isfile(a['img_path']) and osp.isfile(b['img_path'])
            assert osp.realpath(a['img_path']) == osp.realpath(b['img_path'])
            np.testing.assert_array_equal(a['gt_label'], b['gt_label'])
    test = SPMLVOC(data_root=voc_root, split='test')
    assert [osp.basename(test.get_data_info(i)['img_path'])
            for i in range(2)] == ['2009_000010.jpg', '2009_000011.jpg']
    assert test.get_data_info(1)['gt_label'].tolist() == [C['bus'], C['car']]


@pytest.mark.slow
def test_tool_prints_summary(voc_root, tmp_path):
    out = str(tmp_path / 'voc')
    proc = subprocess.run([
        sys.executable, 'tools/prepare_spml.py', 'voc', '--data-root',
        voc_root, '--out-dir', out, '--check-images'
    ], cwd=osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))),
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[-3].split() == [
        'train', '5', '4', '1', 'without', 'positive', '1.75', 'train', '3,',
        'val', '1'
    ]
    assert lines[-2].split() == ['val', '3', '2', '1', 'without', 'positive',
                                 '1.50', 'test', '2']
    assert 'voc: 20 classes' in proc.stdout
    assert osp.isfile(osp.join(out, 'formatted_val_labels_obs.npy'))


def test_missing_files_name_path_and_layout(voc_root, tmp_path):
    with pytest.raises(FileNotFoundError, match='Expected layout'):
        load_voc_split(str(tmp_path / 'nowhere'), 'train')
    missing = osp.join(voc_root, 'VOCdevkit', 'VOC2012', 'ImageSets', 'Main',
                       'sofa_val.txt')
    os.remove(missing)
    with pytest.raises(FileNotFoundError) as info:
        load_voc_split(voc_root, 'val')
    assert missing in str(info.value)
    assert 'VOCdevkit/VOC2012/' in str(info.value)
    os.rename(
        osp.join(voc_root, 'VOCdevkit', 'VOC2012', 'JPEGImages'),
        osp.join(voc_root, 'elsewhere'))
    with pytest.raises(FileNotFoundError, match='JPEGImages not found'):
        load_voc_split(voc_root, 'train')


def test_class_files_must_agree(voc_root):
    main = osp.join(voc_root, 'VOCdevkit', 'VOC2012', 'ImageSets', 'Main')
    path = osp.join(main, 'bird_train.txt')
    lines = open(path).read().splitlines()
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:2] + ['2008_000099 -1'] + lines[3:]) + '\n')
    with pytest.raises(ValueError, match=r'bird_train\.txt, line 3: image '
                       r'2008_000099 disagrees with .*aeroplane_train\.txt'):
        load_voc_split(voc_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:4]) + '\n')
    with pytest.raises(ValueError, match='ends after 4 images'):
        load_voc_split(voc_root, 'train')
    with open(path, 'w') as f:
        f.write('\n'.join(lines[:1] + ['2008_000001 2'] + lines[2:]) + '\n')
    with pytest.raises(ValueError, match=r'bird_train\.txt, line 2: expected'):
        load_voc_split(voc_root, 'train')


def test_unreadable_image_names_the_file(voc_root, tmp_path):
    from mmcv.transforms import LoadImageFromFile
    bad = osp.join(voc_root, 'VOCdevkit', 'VOC2012', 'JPEGImages',
                   '2009_000011.jpg')
    with open(bad, 'wb') as f:
        f.write(b'not a jpeg')
    prepare_official('voc', voc_root, str(tmp_path / 'plain'))
    with pytest.raises(ValueError, match=f'unreadable image {bad}'):
        prepare_official('voc', voc_root, str(tmp_path / 'checked'),
                         check_images=True)
    # at training time the loader's error names the file
    test = SPMLVOC(data_root=voc_root, split='test',
                   pipeline=[LoadImageFromFile()])
    assert test[0]['img'].shape == (3, 4, 3)
    with pytest.raises(Exception, match='2009_000011.jpg'):
        test[1]
    os.remove(bad)
    with pytest.raises(FileNotFoundError, match='2009_000011.jpg'):
        prepare_official('voc', voc_root, str(tmp_path / 'missing'))
