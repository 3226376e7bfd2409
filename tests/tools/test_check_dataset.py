"""tools/check_dataset.py and the checks at dataset build: every problem is
reported with file and row, none stops the search for the others."""
import importlib.util
import json
import os.path as osp
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from spml_mm.datasets import (SPMLDataset, load_multilabel_annotations,
                              observe_uniform, split_train_val)
from spml_mm.datasets.validation import DatasetError
from spml_mm.engine.hooks import SPMLDatasetCheckHook
from tests.conftest import REPO

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
    assert out.strip().endswith('problem(s) (val: 10 classes, test: 10 '
                                'classes)')


def test_check_dataset_tool_passes_a_clean_dataset(tiny_demo, capsys):
    tool = load_tool()
    assert tool.main([CONFIG] + options(tiny_demo)) == 0
    out = capsys.readouterr().out
    assert out.strip() == ('0 problem(s) (train: 10 classes, val: 10 '
                           'classes, test: 10 classes)')
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
    problems, classes = load_tool().check(cfg)
    where = 'train dataset (MultiLabelDataset) sample'
    assert problems == [
        f'{where} 1 ({tmp_path}/1.jpg): no positive label; every training '
        'sample needs its observed positive',
        f"{where} 2 ({tmp_path}/2.jpg): labels [1, 3] outside the head's "
        'num_classes=3; make the head and dataset agree',
    ]
    assert classes == dict(train=3)
    # MMPretrain's own head trains on full labels: not the SPML head's rules
    cfg.model.head.type = 'MultiLabelLinearClsHead'
    assert load_tool().check(cfg)[0] == []
