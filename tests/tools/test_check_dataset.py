"""tools/check_dataset.py and the checks at dataset build: every problem is
reported with file and row, none stops the search for the others."""
import importlib.util
import json
import os
import os.path as osp
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from spml_mm.datasets import (SPMLDataset, load_multilabel_annotations,
                              observe_uniform, split_train_val)
from spml_mm.datasets.validation import DatasetError
from spml_mm.engine.hooks import SPMLDatasetCheckHook
from tests.conftest import PYTHON, REPO

CONFIG = osp.join(REPO, 'configs/an/an_vgg11bn_demo.py')


def load_tool():
    spec = importlib.util.spec_from_file_location(
        'check_dataset', osp.join(REPO, 'tools/check_dataset.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def options(root):
    return ['--cfg-options'] + [
        f'{split}_dataloader.dataset.data_root={root}'
        for split in ('train', 'val', 'test')
    ]


@pytest.fixture
def broken_demo(tiny_demo, tmp_path):
    """The demo with image and label faults in protocol-train rows."""
    root = str(tmp_path / 'demo')
    shutil.copytree(tiny_demo, root)
    images = np.load(osp.join(root, 'formatted_train_images.npy'))
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    train_idx, _ = split_train_val(len(labels), 0.2, 1200)
    a, b, c, d, e, f, g, h = train_idx[:8]
    observed = observe_uniform(labels, seed=1200)
    observed[a, np.flatnonzero(labels[a] == 1)] = 1  # several positives
    observed[b] = 0  # none
    observed[c] = 0
    observed[c, np.flatnonzero(labels[c] == 0)[0]] = 1  # contradiction
    observed[d, 0] = 5  # not -1/0/1
    labels[e, 0] = 2  # not 0/1
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    np.save(osp.join(root, 'formatted_train_labels_obs.npy'), observed)
    path = lambda i: osp.join(root, images[i])  # noqa: E731
    shutil.os.remove(path(f))
    open(path(g), 'wb').close()
    open(path(h), 'wb').write(b'not an image')
    return root, images, dict(a=a, b=b, c=c, d=d, e=e, f=f, g=g, h=h), labels


def test_dataset_build_reports_every_label_problem(broken_demo):
    root, images, rows, labels = broken_demo
    with pytest.raises(DatasetError) as err:
        SPMLDataset(root, split='train')
    where = f'SPMLDataset ({root}, official train split) row'
    problems = err.value.problems
    c_class = np.flatnonzero(labels[rows['c']] == 0)[0]
    expected = [
        f'{where} {rows["a"]} ({images[rows["a"]]}): '
        f'{int(labels[rows["a"]].sum())} observed positives',
        f'{where} {rows["b"]} ({images[rows["b"]]}): no observed positive',
        f'{where} {rows["c"]} ({images[rows["c"]]}): class {c_class} is '
        'observed +1 but its full label is 0',
        f'{where} {rows["d"]} ({images[rows["d"]]}): observed labels hold '
        '0, 1, 5; they must be -1/0/1',
        f'{where} {rows["e"]} ({images[rows["e"]]}): labels hold 0, 1, 2; '
        'they must be 0/1',
    ]
    for line in expected:
        assert any(p.startswith(line) for p in problems), (line, problems)
    assert len(problems) == 5 + (labels[rows['a']].sum() < 2)
    assert 'SPMLDataset train split: ' in str(err.value)
    # several positives are accepted when asked for
    with pytest.raises(DatasetError) as err:
        SPMLDataset(root, split='train', single_positive=False)
    assert len(err.value.problems) == len(problems) - 1


def test_check_dataset_tool_lists_everything(broken_demo, capsys):
    root, images, rows, _ = broken_demo
    tool = load_tool()
    assert tool.main([CONFIG] + options(root)) == 1
    out = capsys.readouterr().out
    assert osp.join(root, images[rows['f']]) + '): image file missing' in out
    assert osp.join(root, images[rows['g']]) + \
        '): image file is empty (0 bytes)' in out
    assert 'cannot be decoded' not in out
    assert 'observed positives' in out and 'they must be 0/1' in out
    assert tool.main([CONFIG, '--decode'] + options(root)) == 1
    out = capsys.readouterr().out
    assert osp.join(root, images[rows['h']]) + \
        '): image cannot be decoded' in out
    # the faults are all in the train split: val and test were built
    assert out.strip().endswith('problem(s), 0 warning(s) (val: 10 classes, '
                                'test: 10 classes)')


def test_check_dataset_tool_passes_a_clean_dataset(tiny_demo, capsys):
    tool = load_tool()
    assert tool.main([CONFIG] + options(tiny_demo)) == 0
    out = capsys.readouterr().out
    assert out.strip() == ('0 problem(s), 0 warning(s) (train: 10 classes, '
                           'val: 10 classes, test: 10 classes)')
    assert tool.main([CONFIG, '--cfg-options', 'model.head.num_classes=7'] +
                     options(tiny_demo)[1:]) == 1
    assert ('train dataset: 10 classes but model.head.num_classes=7' in
            capsys.readouterr().out)
    epr = osp.join(REPO, 'configs/epr/epr_vgg11bn_demo.py')
    assert tool.main([epr] + options(tiny_demo)) == 0
    capsys.readouterr()
    assert tool.main([epr, '--cfg-options',
                      'model.head.loss.expected_positives=12'] +
                     options(tiny_demo)[1:]) == 1
    assert ('model.head.loss.expected_positives=12 (k) exceeds '
            'model.head.num_classes=10: an image cannot have more positive '
            'labels than there are classes' in capsys.readouterr().out)


def test_hook_reports_every_missing_image_before_training(broken_demo):
    root, images, rows, _ = broken_demo
    dataset = SPMLDataset(root, split='test')
    missing = [dataset.get_data_info(k)['img_path'] for k in (3, 9)]
    for path in missing:
        shutil.os.remove(path)
    runner = SimpleNamespace(
        model=SimpleNamespace(head=SimpleNamespace(num_classes=10)),
        test_dataloader=SimpleNamespace(dataset=dataset))
    with pytest.raises(DatasetError) as err:
        SPMLDatasetCheckHook().before_test(runner)
    assert err.value.problems == [
        f'test dataset (SPMLDataset) sample {k} ({p}): image file missing'
        for k, p in zip((3, 9), missing)
    ]
    SPMLDatasetCheckHook(check_images='none').before_test(runner)
    with pytest.raises(ValueError, match='check_images must be one of'):
        SPMLDatasetCheckHook(check_images='all')


def test_json_entries_of_the_wrong_type_are_all_named(tmp_path):
    path = str(tmp_path / 'train.json')
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=['a', 'b']),
                       data_list=[dict(img_path='ok.jpg', gt_label=[0]), 5,
                                  dict(img_path=3, gt_label=[1]),
                                  dict(img_path='s.jpg', gt_label='x'),
                                  ['img_path', 'gt_label']]), f)
    with pytest.raises(DatasetError) as err:
        load_multilabel_annotations(path)
    assert err.value.problems == [
        f'{path}: data_list[1] is a int (5); expected a dict with '
        '`img_path` and `gt_label`.',
        f'{path}: data_list[2] has img_path 3; expected a path string.',
        f"{path}: data_list[3] (s.jpg) has gt_label 'x'; labels are class "
        'indices in [0, 2).',
        f"{path}: data_list[4] is a list (['img_path', 'gt_label']); "
        'expected a dict with `img_path` and `gt_label`.',
    ]


def test_check_dataset_tool_reads_labels_as_the_spml_head(tmp_path):
    """A dataset that does not check its labels itself (MMPretrain's
    MultiLabelDataset) gets the head's checks that the training hook runs:
    a sample without a positive, an index outside the head's classes."""
    from mmengine.config import Config
    for k in range(3):
        open(tmp_path / f'{k}.jpg', 'wb').write(b'x')
    data_list = [dict(img_path='0.jpg', gt_label=[0]),
                 dict(img_path='1.jpg', gt_label=[]),
                 dict(img_path='2.jpg', gt_label=[1, 3])]
    with open(tmp_path / 'train.json', 'w') as f:
        json.dump(dict(metainfo=dict(classes=['a', 'b', 'c']),
                       data_list=data_list), f)
    cfg = Config.fromfile(CONFIG)
    cfg.model.head.num_classes = 3
    for split in ('val', 'test'):
        cfg[f'{split}_dataloader'] = None
    cfg.train_dataloader.dataset = dict(
        type='MultiLabelDataset', data_root=str(tmp_path),
        ann_file='train.json', pipeline=[])
    problems, warnings, classes = load_tool().check(cfg)
    where = 'train dataset (MultiLabelDataset) sample'
    assert problems == [
        f'{where} 1 ({tmp_path}/1.jpg): no positive label; every training '
        'sample needs its observed positive',
        f"{where} 2 ({tmp_path}/2.jpg): labels [1, 3] outside the head's "
        'num_classes=3; make the head and dataset agree',
    ]
    assert warnings == [
        'train dataset (MultiLabelDataset): 1 of 3 classes have no positive '
        'label in the training split: 2 (c); the model never sees a positive '
        'of them and their AP measures nothing learned: add training images '
        'of them or leave them out of the classes']
    assert classes == dict(train=3)
    # MMPretrain's own head trains on full labels: not the SPML head's rules
    cfg.model.head.type = 'MultiLabelLinearClsHead'
    assert load_tool().check(cfg)[0] == []


@pytest.fixture
def duplicated_demo(tiny_demo, tmp_path):
    """The demo whose image list names images twice: copies with other
    labels on both sides of the train/val split, and inside the train
    split with the same and with other labels."""
    root = str(tmp_path / 'dup')
    shutil.copytree(tiny_demo, root)
    images = np.load(osp.join(root, 'formatted_train_images.npy'))
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    train_idx, val_idx = split_train_val(len(labels), 0.2, 1200)
    t = [i for i in train_idx if labels[i].any()]
    v = next(i for i in val_idx if (labels[i] != labels[t[0]]).any())
    images[v] = images[t[0]]  # across the split, other labels
    images[t[2]], labels[t[2]] = images[t[1]], labels[t[1]]  # same labels
    other = next(i for i in t[4:] if (labels[i] != labels[t[3]]).any())
    images[other] = images[t[3]]  # in the train split, other labels
    np.save(osp.join(root, 'formatted_train_images.npy'), images)
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    return root, images, labels, dict(t=t, v=v, other=other)


def test_duplicates_and_images_shared_between_splits(duplicated_demo,
                                                    capsys):
    """The report's case passed with '0 problem(s)' and trained."""
    root, images, labels, rows = duplicated_demo
    t, v, other = rows['t'], rows['v'], rows['other']
    dataset = SPMLDataset(root, split='train')
    val = SPMLDataset(root, split='val')
    index = {row: k for k, row in enumerate(
        i for i in split_train_val(len(labels), 0.2, 1200)[0]
        if labels[i].any())}
    val_index = list(split_train_val(len(labels), 0.2, 1200)[1]).index(v)
    path = lambda i: osp.join(root, images[i])  # noqa: E731
    names = lambda i: np.flatnonzero(labels[i]).tolist()  # noqa: E731
    assert dataset.get_data_info(index[t[0]])['img_path'] == path(t[0])
    assert val.get_data_info(val_index)['img_path'] == path(v)
    assert load_tool().main([CONFIG] + options(root)) == 1
    out = capsys.readouterr().out.splitlines()
    where = 'train dataset (SPMLDataset): image'
    pair = sorted([(index[t[3]], t[3]), (index[other], other)])
    lines = {
        f'{where} {path(t[3])} is listed 2 times with different labels (' +
        '; '.join(f'sample {k}: labels {names(i)}' for k, i in pair) +
        '); keep one row, with its right labels',
        f'image {path(v)} is in both the train split (sample {index[t[0]]}) '
        f'and the val split (sample {val_index}), labels {names(t[0])} in '
        f'train, labels {names(v)} in val; the val scores would count an '
        'image the model trained on: list it in one split only',
        f'warning: {where} {path(t[1])} is listed 2 times with the same '
        f'labels (samples {index[t[1]]}, {index[t[2]]}); it counts 2 times '
        'in the loss and the scores: keep one row',
    }
    assert lines <= set(out), '\n'.join(out)
    assert out[-1] == ('2 problem(s), 1 warning(s) (train: 10 classes, val: '
                       '10 classes, test: 10 classes)')


def test_each_bad_training_row_is_listed_once(tiny_demo, tmp_path, capsys):
    """A label problem of the official train split stops both the train and
    the val split; the tool listed it (and its missing images) twice."""
    root = str(tmp_path / 'bad')
    shutil.copytree(tiny_demo, root)
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    images = np.load(osp.join(root, 'formatted_train_images.npy'))
    labels[7, 0] = 2
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    shutil.os.remove(osp.join(root, images[9]))
    assert load_tool().main([CONFIG] + options(root)) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if 'they must be 0/1' in line] == [
        f'SPMLDataset ({root}, official train split) row 7 ({images[7]}): '
        'labels hold 0, 1, 2; they must be 0/1']
    assert [line for line in out if 'missing' in line] == [
        f'train dataset sample 9 ({osp.join(root, images[9])}): image file '
        'missing']
    assert out[-1] == '2 problem(s), 0 warning(s) (test: 10 classes)'


def test_classes_without_a_training_positive_are_named(tiny_demo, tmp_path,
                                                       capsys):
    root = str(tmp_path / 'gap')
    shutil.copytree(tiny_demo, root)
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    labels[:, [3, 8]] = 0
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    assert load_tool().main([CONFIG] + options(root)) == 0
    out = capsys.readouterr().out.splitlines()
    assert ('warning: train dataset (SPMLDataset): 2 of 10 classes have no '
            'positive label in the training split: 3, 8; '
            'the model never sees a positive of them and their AP measures '
            'nothing learned: add training images of them or leave them out '
            'of the classes') in out
    assert out[-1].startswith('0 problem(s), 1 warning(s)')


@pytest.mark.slow
def test_training_refuses_the_duplicated_list(duplicated_demo, tmp_path):
    """tools/train.py on the report's image list stops before the first
    iteration, naming the duplicates and the image shared with val."""
    root, images, _, rows = duplicated_demo
    work = str(tmp_path / 'work')
    proc = subprocess.run(
        [PYTHON, 'tools/train.py', CONFIG, '--work-dir', work] +
        options(root) + ['train_cfg.max_epochs=1'],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert 'DatasetError: the train dataset (SPMLDataset): 1 problem(s)' in out
    assert (f'image {osp.join(root, images[rows["t"][3]])} is listed 2 '
            'times with different labels') in out
    assert 'Epoch(train)' not in out
    assert not [f for f in os.listdir(work) if f.endswith('.pth')]


@pytest.mark.slow
def test_check_dataset_reads_the_teacher_score_file(tiny_demo, tmp_path):
    """A VLPL config's score file is read as training reads it: missing,
    for other classes, or a text file named .npz, each a problem."""
    from spml_mm.datasets.teacher_scores import dataset_image_paths
    dataset = SPMLDataset(data_root=tiny_demo, split='train', pipeline=[])
    paths = dataset_image_paths(dataset)
    score_file = str(tmp_path / 'teacher.npz')

    def check():
        """The tool's teacher problem and its summary line."""
        proc = subprocess.run(
            [PYTHON, 'tools/check_dataset.py',
             osp.join(REPO, 'configs/vlpl/vlpl_vgg11bn_demo.py')] +
            options(tiny_demo) +
            [f'model.head.label_bank.score_file={score_file}'],
            cwd=REPO, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        return [line for line in lines if line.startswith(where)] + \
            lines[-1:]

    where = 'teacher scores (model.head.label_bank.score_file): '
    out = check()
    assert out[0] == (f'{where}teacher score file {score_file} not found; '
                      'write it with python tools/score_teacher.py CONFIG '
                      f'--source {{file,model,clip,ram}} ... --out '
                      f'{score_file}')
    assert len(out) == 2 and out[-1].startswith('1 problem(s)')
    np.savez(score_file, scores=np.full((len(paths), 10), 0.1),
             img_paths=np.array(paths),
             classes=np.array([f'class {k}' for k in range(10)]),
             meta=np.array(json.dumps(dict(source='file'))))
    out = check()
    assert out[0].startswith(f'{where}{score_file} was written for another '
                             'class list than the dataset (SPMLDataset, '
                             f'{tiny_demo}): 10 classes against 10')
    with open(score_file, 'w') as f:
        f.write('image,0,1\nimages/train/train_00000.png,0.1,0.9\n')
    out = check()
    assert out[0].startswith(f"{where}{score_file} is not an .npz file (a "
                             "zip archive): it starts with b'image,0,1")
    assert 'pickled' not in out[0]
