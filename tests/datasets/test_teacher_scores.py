import json
import os.path as osp
import re
import shutil

import numpy as np
import pytest
import torch

from spml_mm.datasets import SPMLDataset
from spml_mm.datasets.teacher_scores import (TeacherScoreError,
                                             dataset_image_paths,
                                             image_fingerprints,
                                             load_teacher_scores,
                                             read_teacher_scores,
                                             rewrite_command,
                                             save_teacher_scores)


@pytest.fixture(scope='module')
def dataset(tiny_demo):
    return SPMLDataset(data_root=tiny_demo, split='train', pipeline=[])


def _table(dataset, seed=0):
    """Scores whose value says the image and class, rows shuffled."""
    paths = dataset_image_paths(dataset)
    classes = list(dataset.metainfo['classes'])
    n, c = len(paths), len(classes)
    scores = (np.arange(n)[:, None] * c + np.arange(c)) / (n * c)
    order = np.random.RandomState(seed).permutation(n)
    return scores, [paths[i] for i in order], classes, scores[order]


def _prints(dataset, paths):
    return image_fingerprints(paths, dataset.data_root)


def test_paths_are_relative_to_data_root(dataset, tiny_demo):
    paths = dataset_image_paths(dataset)
    assert len(paths) == len(dataset)
    first = dataset.get_data_info(0)['img_path']
    assert paths[0] == osp.relpath(first, tiny_demo)
    assert paths[0].startswith('images/train/train_')
    assert osp.isfile(osp.join(tiny_demo, paths[0]))


def test_round_trip_in_sample_order(dataset, tmp_path):
    scores, paths, classes, stored = _table(dataset)
    crops = np.stack([stored, stored / 2], 1)
    path = str(tmp_path / 'teacher.npz')
    save_teacher_scores(path, stored, paths, classes,
                        dict(source='synthetic', note='test'),
                        crop_scores=crops,
                        img_fingerprints=_prints(dataset, paths))
    loaded = load_teacher_scores(path, dataset)
    assert loaded.dtype == torch.float32
    assert loaded.shape == (len(dataset), 10)
    torch.testing.assert_close(loaded,
                               torch.from_numpy(scores.astype(np.float32)))
    loaded_crops = load_teacher_scores(path, dataset, crops=True)
    assert loaded_crops.shape == (len(dataset), 2, 10)
    torch.testing.assert_close(loaded_crops[:, 1], loaded / 2)
    # no pickled objects: readable with allow_pickle=False
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == [
            'classes', 'crop_scores', 'img_fingerprints', 'img_paths',
            'meta', 'scores'
        ]
        assert data['scores'].dtype == np.float32
        meta = json.loads(str(data['meta']))
    assert meta['source'] == 'synthetic' and meta['note'] == 'test'
    assert 'created' in meta and 'spml_mm_version' in meta


def test_no_crops_refused(dataset, tmp_path):
    _, paths, classes, stored = _table(dataset)
    path = str(tmp_path / 'teacher.npz')
    save_teacher_scores(path, stored, paths, classes, dict(source='file'),
                        img_fingerprints=_prints(dataset, paths))
    with pytest.raises(TeacherScoreError, match='holds no crop scores'):
        load_teacher_scores(path, dataset, crops=True)


def _save(path, dataset, **change):
    _, paths, classes, stored = _table(dataset)
    table = dict(scores=stored, img_paths=paths, classes=classes,
                 meta=dict(source='clip',
                           command='python tools/score_teacher.py cfg.py '
                           f'--source clip --out {path}'))
    table.update(change)
    if 'img_fingerprints' not in table:
        table['img_fingerprints'] = _prints(dataset, table['img_paths'])
    save_teacher_scores(path, **table)
    return table


def test_other_class_order_refused(dataset, tmp_path):
    path = str(tmp_path / 't.npz')
    classes = list(dataset.metainfo['classes'])
    classes[0], classes[1] = classes[1], classes[0]
    _save(path, dataset, classes=classes)
    with pytest.raises(TeacherScoreError) as err:
        load_teacher_scores(path, dataset)
    message = str(err.value)
    assert message.startswith(f'{path} was written for another class list '
                              'than the dataset (SPMLDataset')
    assert "the same classes in another order (0: '1' (file) vs '0'; " \
           "1: '0' (file) vs '1')" in message
    # the file exists: the command replaces it
    assert message.endswith('Write it again for this dataset with python '
                            'tools/score_teacher.py cfg.py --source clip '
                            f'--out {path} --overwrite')


def test_other_class_names_refused(dataset, tmp_path):
    path = str(tmp_path / 't.npz')
    classes = list(dataset.metainfo['classes'])
    classes[3] = 'three'
    _save(path, dataset, classes=classes)
    with pytest.raises(TeacherScoreError,
                       match=re.escape("10 classes against 10; only in the "
                                       "file: ['three'], only in the "
                                       "dataset")):
        load_teacher_scores(path, dataset)


def test_missing_and_extra_images_refused(dataset, tmp_path):
    path = str(tmp_path / 't.npz')
    _, paths, classes, stored = _table(dataset)
    paths = list(paths)
    paths[5] = 'images/other/x.png'
    _save(path, dataset, img_paths=paths,
          img_fingerprints=['0:0'] * len(paths))
    with pytest.raises(TeacherScoreError) as err:
        load_teacher_scores(path, dataset)
    message = str(err.value)
    assert message.startswith(f'{path} was written for another dataset: '
                              '1 images of the dataset')
    assert "1 images in it are not in the dataset (SPMLDataset, " in message
    assert "(first: 'images/other/x.png')" in message


def test_other_dataset_size_refused(dataset, tmp_path):
    path = str(tmp_path / 't.npz')
    _, paths, classes, stored = _table(dataset)
    _save(path, dataset, img_paths=paths[:-3], scores=stored[:-3])
    with pytest.raises(TeacherScoreError,
                       match=f'it has {len(dataset) - 3} images and the '
                       f'dataset .* {len(dataset)} \\(another dataset or '
                       'split\\?\\); 3 images of the dataset .* are missing'):
        load_teacher_scores(path, dataset)


@pytest.mark.parametrize('bad,what', [(1.5, 'values outside'),
                                      (np.nan, 'non-finite values'),
                                      (-0.1, 'values outside')])
def test_scores_outside_unit_interval_refused(dataset, tmp_path, bad, what):
    _, paths, classes, stored = _table(dataset)
    stored = stored.copy()
    stored[7, 2] = bad
    with pytest.raises(TeacherScoreError, match=f'scores holds 1 {what}'):
        save_teacher_scores(str(tmp_path / 'x.npz'), stored, paths, classes,
                            dict(source='file'),
                            img_fingerprints=_prints(dataset, paths))
    # a file written by other means is refused when read
    path = str(tmp_path / 'raw.npz')
    np.savez(path, scores=stored.astype(np.float32),
             img_paths=np.array(paths), classes=np.array(classes),
             meta=np.array(json.dumps(dict(source='file'))))
    with pytest.raises(TeacherScoreError,
                       match=f'{re.escape(path)}: scores holds 1 {what} .*'
                       'first in row 7.* Write it again with python '
                       'tools/score_teacher.py CONFIG --source file'):
        load_teacher_scores(path, dataset)


def test_not_a_score_file(dataset, tmp_path):
    path = str(tmp_path / 'other.npz')
    np.savez(path, features=np.zeros((3, 2)))
    with pytest.raises(TeacherScoreError,
                       match='not a teacher score file .*--source file '
                       '--scores YOUR_FILE'):
        read_teacher_scores(path)
    with pytest.raises(FileNotFoundError, match='not found; write it with'):
        read_teacher_scores(str(tmp_path / 'none.npz'))


def test_save_validates(dataset, tmp_path):
    _, paths, classes, stored = _table(dataset)
    path = str(tmp_path / 't.npz')
    prints = _prints(dataset, paths)
    with pytest.raises(TeacherScoreError, match='listed twice'):
        save_teacher_scores(path, stored, [paths[0]] + paths[:-1], classes,
                            dict(source='file'), img_fingerprints=prints)
    with pytest.raises(TeacherScoreError, match="meta\\['source'\\] must"):
        save_teacher_scores(path, stored, paths, classes, dict(source='x'),
                            img_fingerprints=prints)
    with pytest.raises(TeacherScoreError, match='expected \\('):
        save_teacher_scores(path, stored[:, :3], paths, classes,
                            dict(source='file'), img_fingerprints=prints)
    with pytest.raises(TeacherScoreError, match='1 image fingerprints for'):
        save_teacher_scores(path, stored, paths, classes, dict(source='file'),
                            img_fingerprints=prints[:1])
    assert not osp.exists(path)


def test_an_indices_subset_reads_its_rows(dataset, tiny_demo, tmp_path):
    """A file of the whole training set serves a subset of it."""
    scores, paths, classes, stored = _table(dataset)
    path = str(tmp_path / 't.npz')
    save_teacher_scores(path, stored, paths, classes, dict(source='file'),
                        img_fingerprints=_prints(dataset, paths))
    subset = SPMLDataset(data_root=tiny_demo, split='train', pipeline=[],
                         indices=[3, 1, 7])
    rows = [dataset_image_paths(dataset).index(p)
            for p in dataset_image_paths(subset)]
    torch.testing.assert_close(load_teacher_scores(path, subset),
                               torch.from_numpy(scores[rows]).float())


def test_other_image_files_at_the_same_paths_refused(tiny_demo, tmp_path):
    root = str(tmp_path / 'demo')
    shutil.copytree(tiny_demo, root)
    dataset = SPMLDataset(data_root=root, split='train', pipeline=[])
    _, paths, classes, stored = _table(dataset)
    path = str(tmp_path / 't.npz')
    _save(path, dataset)
    image = osp.join(root, paths[4])
    size = osp.getsize(image)
    with open(image, 'ab') as f:
        f.write(b'\0')
    with pytest.raises(TeacherScoreError) as err:
        load_teacher_scores(path, dataset)
    assert str(err.value).startswith(
        f'{path} scored other image files than those of the dataset '
        f'(SPMLDataset, {root}): 1 of the {len(paths)} images differ from '
        f'the ones it scored (first: {paths[4]!r}, {size} bytes when '
        f'scored, {size + 1} now): they were regenerated or replaced since '
        'it was written (')
    assert str(err.value).endswith(
        'Score them again with python tools/score_teacher.py cfg.py '
        f'--source clip --out {path} --overwrite')
    # the same size, another last byte
    with open(image, 'r+b') as f:
        f.truncate(size)
        f.seek(size - 1)
        last = f.read(1)
        f.seek(size - 1)
        f.write(bytes([last[0] ^ 1]))
    with pytest.raises(TeacherScoreError,
                       match=f'{size} bytes as when scored, other content'):
        load_teacher_scores(path, dataset)


def test_a_file_without_fingerprints_refused(dataset, tmp_path):
    _, paths, classes, stored = _table(dataset)
    path = str(tmp_path / 'old.npz')
    meta = dict(source='clip', created='2025-01-01T00:00:00Z',
                spml_mm_version='0.1.0',
                command=f'python tools/score_teacher.py cfg.py --out {path}')
    np.savez(path, scores=stored.astype(np.float32),
             img_paths=np.array(paths), classes=np.array(classes),
             meta=np.array(json.dumps(meta)))
    with pytest.raises(TeacherScoreError) as err:
        load_teacher_scores(path, dataset)
    assert str(err.value) == (
        f'{path} records no image fingerprints (written '
        '2025-01-01T00:00:00Z by spml-mm 0.1.0, before score files kept '
        'them), so nothing shows that the dataset (SPMLDataset, '
        f'{dataset.data_root}) holds the images it scored rather than '
        'others at the same paths. Score the images again with python '
        f'tools/score_teacher.py cfg.py --out {path} --overwrite; or, if '
        'they are the very images it scored, bind a copy to them with '
        'python tools/score_teacher.py CONFIG --source file --scores '
        f'{path} --out {tmp_path / "old_bound.npz"} and train with '
        '--cfg-options model.head.label_bank.score_file='
        f'{tmp_path / "old_bound.npz"}')
    # the binding advice never writes over the file it reads (issue 58)
    assert f'--scores {path} --out {path}' not in str(err.value)


@pytest.mark.parametrize('content,problem', [
    (b'image,0,1\na.png,0.1,0.2\n', 'is not an .npz file (a zip archive): '
     "it starts with b'image,0,1\\na.png,'"),
    (b'', 'is empty, not an .npz file'),
])
def test_a_file_that_is_not_an_npz(tmp_path, content, problem):
    path = tmp_path / 'teacher.npz'
    path.write_bytes(content)
    with pytest.raises(TeacherScoreError) as err:
        read_teacher_scores(str(path))
    assert str(err.value).startswith(
        f'{path} {problem}; a teacher score file is an .npz written by '
        'tools/score_teacher.py: python tools/score_teacher.py CONFIG')


def test_the_commands_that_write_a_file_again(tmp_path):
    path = str(tmp_path / 't.npz')
    synthetic = dict(source='synthetic', noise=0.3, crops=0)
    assert rewrite_command(path, synthetic, crops=True) == (
        'PYTHONPATH=.dev_scripts python -m benchmark.teacher_quality '
        '--write-teacher CONFIG '
        f'--noise 0.3 --crops 4 --teacher-out {path}')
    clip = dict(source='clip', command='python tools/score_teacher.py c.py '
                f'--source clip --crops 3 --out {path}')
    assert rewrite_command(path, clip, crops=True) == (
        'python tools/score_teacher.py c.py --source clip --crops 4 --out '
        f'{path}')
    open(path, 'w').close()
    assert rewrite_command(path, clip).endswith(f'--out {path} --overwrite')
