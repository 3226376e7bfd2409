"""The label-set tools refuse what cannot be right, the way a user meets it
(issue 58): each tool's ``main(argv)`` in this process on a model built
here (no training) and the session's small demo dataset.

- ``--out`` never replaces one of the run's inputs, nor an existing file
  the tool did not write (unless ``--overwrite``), and is written whole;
- a decision calibrated for another model (weights, config) is refused,
  or applied with ``--allow-other-thresholds`` and said;
- a checkpoint that does not fit the config is refused as tools/test.py
  refuses it;
- calibrations that cannot be right, oversized images, and the smaller
  mistakes of the issue are refused with the fix.
"""
import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import os.path as osp
import shutil

import numpy as np
import pytest
import torch
from mmengine.config import Config

from tests.conftest import REPO

CONFIG = 'configs/an/an_vgg11bn_demo.py'
CLASSES = [str(k) for k in range(10)]


def tool(name):
    spec = importlib.util.spec_from_file_location(
        f'tool_{name}', osp.join(REPO, 'tools', f'{name}.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(name, *argv):
    """``tools/<name>.py argv`` in this process: (exit status, stdout and
    stderr together)."""
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = tool(name).main(list(argv)) or 0
        except SystemExit as stop:
            if isinstance(stop.code, str):
                out.write(stop.code + '\n')
                code = 1
            else:
                code = stop.code or 0
    return code, out.getvalue()


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def save_model(path, seed, **options):
    """A demo AN model of random weights (``seed``) saved as a checkpoint
    with the demo's class names."""
    from spml_mm.apis import build_model
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    cfg.merge_from_dict(options)
    torch.manual_seed(seed)
    model = build_model(cfg)
    torch.save(dict(state_dict=model.state_dict(),
                    meta=dict(dataset_meta=dict(classes=CLASSES))), path)
    return path


@pytest.fixture(scope='module')
def bench(tiny_demo, tmp_path_factory):
    """Two checkpoints of other weights (a.pth calibrated by
    tools/calibrate.py, b.pth not), the data options and a few images."""
    folder = tmp_path_factory.mktemp('refusals')
    a = save_model(str(folder / 'a.pth'), 0)
    b = save_model(str(folder / 'b.pth'), 1)
    options = ['--cfg-options'] + [
        f'{split}_dataloader.dataset.data_root={tiny_demo}'
        for split in ('train', 'val', 'test')]
    code, log = run('calibrate', CONFIG, a, '--positives-per-image', '2',
                    '--device', 'cpu', '--out',
                    str(folder / 'a_thresholds.json'), *options)
    assert code == 0, log
    images = osp.join(tiny_demo, 'images', 'val')
    return argparse.Namespace(folder=folder, a=a, b=b, options=options,
                              images=images,
                              thresholds=str(folder / 'a_thresholds.json'))


@pytest.mark.slow  # ~14 s: a dozen runs of the tools
def test_out_never_replaces_an_input_or_a_users_file(bench, tmp_path):
    a, thresholds = bench.a, bench.thresholds
    kept = {p: digest(p) for p in (a, thresholds)}
    # the checkpoint, the config, the thresholds it decides by: refused
    for name, argv in (
            ('calibrate', [CONFIG, a, '--positives-per-image', '2', '--out',
                           a]),
            ('calibrate', [CONFIG, a, '--positives-per-image', '2', '--out',
                           CONFIG]),
            ('export_onnx', [CONFIG, a, '--out', a]),
            ('predict', [CONFIG, a, bench.images, '--out', thresholds])):
        code, log = run(name, *argv, *bench.options)
        assert code != 0, (name, argv, log)
        assert ('is one of this run\'s inputs' in log
                or 'exists and was not written by this tool' in log), log
    assert {p: digest(p) for p in kept} == kept
    code, log = run('export_onnx', CONFIG, a, '--out', bench.thresholds,
                    *bench.options)
    assert "is one of this run's inputs" in log
    # a file the user owns: kept, named, replaced only with --overwrite
    for ending in ('.csv', '.json', '.onnx'):
        mine = tmp_path / f'mine{ending}'
        mine.write_text('my own notes\n')
        name = 'export_onnx' if ending == '.onnx' else 'predict'
        inputs = [] if ending == '.onnx' else [bench.images]
        code, log = run(name, CONFIG, a, *inputs, '--out', str(mine),
                        *bench.options)
        assert code != 0
        assert (f'--out {mine} exists and was not written by this tool; '
                'it is kept: pass --overwrite to replace it') in log
        assert mine.read_text() == 'my own notes\n'
    mine = tmp_path / 'mine.csv'
    code, log = run('predict', CONFIG, a, bench.images, '--out', str(mine),
                    '--overwrite', *bench.options)
    assert code == 0, log
    assert f'replacing {mine} (--overwrite)' in log
    assert mine.read_text().startswith('image,labels,')
    # its own file: replaced, saying so; the ending must be the format's
    code, log = run('predict', CONFIG, a, bench.images, '--out', str(mine),
                    *bench.options)
    assert f'replacing {mine}, which this tool wrote earlier' in log
    code, log = run('predict', CONFIG, a, bench.images, '--out',
                    str(tmp_path / 'preds.txt'), *bench.options)
    assert 'must end with .json or .csv' in log
    # written whole: a partial file of a killed write is removed by the
    # next run, none is left by a finished one
    from spml_mm.utils.atomic_backend import partial_path
    out = tmp_path / 'preds.json'
    with open(partial_path(str(out)), 'w') as f:
        f.write('{"half')
    code, log = run('predict', CONFIG, a, bench.images, '--out', str(out),
                    *bench.options)
    assert code == 0, log
    assert json.loads(out.read_text())['format'] == 'spml-mm predictions 1'
    assert sorted(os.listdir(tmp_path)) == ['mine.csv', 'mine.json',
                                            'mine.onnx', 'preds.json']
    # calibrate replaces its own thresholds file, and a user's only with
    # --overwrite
    other = tmp_path / 'mine.json'
    code, log = run('calibrate', CONFIG, a, '--positives-per-image', '2',
                    '--out', str(other), *bench.options)
    assert code != 0 and other.read_text() == 'my own notes\n'
    code, log = run('calibrate', CONFIG, a, '--positives-per-image', '2',
                    '--out', thresholds, *bench.options)
    assert f'replacing {thresholds}, which this tool wrote earlier' in log
    assert not [f for f in os.listdir(bench.folder) if f.endswith('.tmp')]


@pytest.mark.slow  # ~8 s
def test_a_decision_of_another_model_is_refused(bench, tmp_path):
    # b's weights copied over the checkpoint a's thresholds lie beside
    model = tmp_path / 'model.pth'
    shutil.copy(bench.b, model)
    shutil.copy(bench.thresholds, tmp_path / 'model_thresholds.json')
    code, log = run('predict', CONFIG, str(model), bench.images)
    assert code != 0
    assert (f'{tmp_path}/model_thresholds.json was calibrated for another '
            f'model than {model}: weights: calibrated on {bench.a}') in log
    assert '--allow-other-thresholds' in log and '--thresholds none' in log
    # an explicit file of another model, in every reader
    for name, argv in (('predict', [bench.b, bench.images]),
                       ('export_onnx', [bench.b, '--out',
                                        str(tmp_path / 'm.onnx')])):
        code, log = run(name, CONFIG, *argv, '--thresholds',
                        bench.thresholds, *bench.options)
        assert code != 0 and 'weights: calibrated on' in log, log
    test_tool = tool('test')
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    args = argparse.Namespace(checkpoint=bench.b, thresholds='auto',
                              allow_other_thresholds=False, cfg_options=None)
    args.thresholds = bench.thresholds
    with pytest.raises(SystemExit, match='weights: calibrated on'):
        test_tool.set_thresholds(cfg, args)
    # the same weights under a config whose preprocessing differs
    code, log = run('predict', CONFIG, bench.a, bench.images, '--cfg-options',
                    'data_preprocessor.mean=[0,0,0]')
    assert code != 0 and 'config: calibrated with' in log
    # applied when asked, and said
    code, log = run('predict', CONFIG, bench.b, bench.images, '--thresholds',
                    bench.thresholds, '--allow-other-thresholds')
    assert code == 0, log
    assert f'WARNING: deciding by {bench.thresholds}, calibrated for another '\
        f'model than {bench.b} (--allow-other-thresholds)' in log
    # its own model: applied
    code, log = run('predict', CONFIG, bench.a, bench.images)
    assert code == 0 and f"decision: {bench.a}'s meta (prior" in log
    code, log = run('predict', CONFIG, bench.a, bench.images,
                    '--thresholds', bench.thresholds)
    assert code == 0 and f'decision: thresholds {bench.thresholds}' in log


def test_a_checkpoint_that_does_not_fit_is_refused(bench, tmp_path):
    for options in (['model.backbone.depth=13'], ['model.head.num_classes=7']):
        for name, argv in (
                ('predict', [bench.images]),
                ('calibrate', ['--positives-per-image', '2']),
                ('export_onnx', ['--out', str(tmp_path / 'm.onnx')])):
            code, log = run(name, CONFIG, bench.a, *argv, '--thresholds'
                            if name != 'calibrate' else '--device', 'none'
                            if name != 'calibrate' else 'cpu',
                            *bench.options, *options)
            assert code != 0, (name, options, log)
            assert (f'checkpoint {bench.a} does not fit the model of this '
                    'config:') in log, log
            assert 'load_strict=False' in log
            assert 'Traceback' not in log
    # a plain checkpoint under a teacher config
    code, log = run('predict', 'configs/vlpl/vlpl_vgg11bn_demo.py', bench.a,
                    bench.images, '--thresholds', 'none')
    assert code != 0 and 'does not fit the model of this config' in log, log


def test_calibrations_that_cannot_be_right_are_refused(bench, tmp_path):
    out = tmp_path / 't.json'
    for argv, words in (
            (['--positives-per-image', '12'], '--positives-per-image 12 '
             'exceeds the 10 classes'),
            (['--method', 'topk', '--positives-per-image', '11'],
             'exceeds the 10 classes')):
        code, log = run('calibrate', CONFIG, bench.a, *argv, '--out',
                        str(out), *bench.options)
        assert code != 0 and words in log, log
        assert not out.exists()
    # f1 on two fully labelled images: classes without a positive named
    code, log = run('calibrate', CONFIG, bench.a, '--method', 'f1', '--out',
                    str(out), *bench.options,
                    'val_dataloader.dataset.val_full_subset=2',
                    'val_dataloader.dataset.val_labels=observed')
    assert code != 0, log
    assert 'classes have no positive among the 2 fully labelled' in log
    assert not out.exists()
    # a threshold of JSON true, a topk of true
    record = json.loads(open(bench.thresholds).read())
    for key, value in (('thresholds', [True] + [0.5] * 9), ('topk', True)):
        bad = dict(record)
        bad.pop('thresholds')
        bad[key] = value
        out.write_text(json.dumps(bad))
        code, log = run('predict', CONFIG, bench.a, bench.images,
                        '--thresholds', str(out))
        assert code != 0 and ("'0': True" in log or 'got True' in log), log


def test_an_oversized_image_is_refused_before_it_is_read(bench, tmp_path):
    from PIL import Image
    big = tmp_path / 'big.png'
    Image.new('1', (8000, 8000)).save(big)  # 64M pixels, a small file
    small = sorted(os.listdir(bench.images))[0]
    code, log = run('predict', CONFIG, bench.a, str(big),
                    osp.join(bench.images, small), '--thresholds', 'none')
    assert code == 1
    assert (f'{big}: cannot be read: 8000 x 8000 pixels, more than 4194304: '
            "the config's test pipeline has no Resize") in log
    assert f'{small}: ' in log and '1 of 2 images could not be read' in log
    # the inferencer, from Python, on a decoded array too
    from spml_mm.apis import SPMLInferencer
    infer = SPMLInferencer(CONFIG, bench.a, thresholds='none', device='cpu',
                           max_pixels=48 * 48)
    results = infer([np.zeros((100, 60, 3), np.uint8),
                     np.zeros((48, 48, 3), np.uint8)])
    assert results[0]['error'].startswith('60 x 100 pixels, more than 2304')
    assert 'pred_label' in results[1]


def test_smaller_mistakes_are_named(bench, tmp_path):
    code, log = run('predict', CONFIG, bench.a, bench.images,
                    '--batch-size', '0')
    assert code == 2 and '--batch-size must be >= 1, got 0' in log
    if not torch.cuda.is_available():
        code, log = run('predict', CONFIG, bench.a, bench.images,
                        '--device', 'cuda')
        assert code == 2 and '--device cuda: no CUDA GPU is visible' in log
        code, log = run('calibrate', CONFIG, bench.a, '--device', 'cuda')
        assert code == 2 and 'no CUDA GPU is visible' in log
    code, log = run('predict', CONFIG, bench.a, f'{bench.images}/*.png')
    assert code != 0 and 'a glob pattern is not expanded by this tool' in log
    listed = tmp_path / 'list.txt'
    listed.write_text('missing.png\n')
    code, log = run('predict', CONFIG, bench.a, str(listed))
    assert code == 1
    assert f'(listed in {listed}, line 1;' in log
    code, log = run('predict', CONFIG, bench.a, bench.images,
                    '--cfg-options', 'model.head.thr=0.3')
    assert code != 0
    assert ('--cfg-options model.head.thr=0.3 and the decision in '
            f"{bench.a}'s meta both set the label-set decision: pass "
            '--thresholds none') in log
    code, log = run('predict', CONFIG, bench.a, bench.images,
                    '--thresholds', 'none', '--cfg-options',
                    'model.head.thr=0.3')
    assert code == 0 and "decision: the head's (thr=0.3" in log


def test_a_stale_image_cache_is_refused_in_the_preflight(tiny_demo,
                                                         tmp_path):
    from spml_mm.datasets.image_cache import (LoadCachedImage,
                                              build_image_cache)
    from spml_mm.engine.hooks import SPMLPreflightHook
    images = sorted(os.listdir(osp.join(tiny_demo, 'images', 'val')))[:3]
    paths = [str(tmp_path / name) for name in images]
    for name, path in zip(images, paths):
        shutil.copy(osp.join(tiny_demo, 'images', 'val', name), path)
    steps = [dict(type='LoadImageFromFile')]
    cache = build_image_cache(paths, steps, str(tmp_path / 'c.npy'))
    LoadCachedImage(cache).check(paths)
    os.utime(paths[1], (0, 0))

    class Dataset:
        pipeline = argparse.Namespace(transforms=[LoadCachedImage(cache)])

        def __len__(self):
            return len(paths)

        def get_data_info(self, i):
            return dict(img_path=paths[i])

    runner = argparse.Namespace(
        train_dataloader=argparse.Namespace(dataset=Dataset()),
        val_loop=None)
    with pytest.raises(ValueError, match=r'is stale for the 3 images of the '
                       r'dataset: 1 changed since it was written \(first: '
                       f'{paths[1]}' + r'\); write the cache again'):
        SPMLPreflightHook._check_image_caches(runner)


def test_gpu_fast_on_a_plain_runner_is_logged(capsys):
    from mmengine.logging import MMLogger
    from spml_mm.utils import check_runner_setup
    MMLogger.get_instance('label_set_refusals')
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    cfg.merge_from_dict({'gpu_fast.image_cache': 'cache.npy'})
    check_runner_setup(cfg, 'train')
    assert "gpu_fast (image_cache='cache.npy') is ignored" in \
        capsys.readouterr().out


def test_a_stale_observed_labels_file_is_named(tiny_demo, tmp_path):
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    root = tmp_path / 'demo'
    shutil.copytree(tiny_demo, root, ignore=shutil.ignore_patterns('images'))
    labels = np.load(root / 'formatted_train_labels.npy')
    np.save(root / 'formatted_train_labels_obs.npy', labels[:-5])
    init_default_scope('mmpretrain')
    with pytest.raises(ValueError, match=r'formatted_train_labels_obs.npy '
                       r'holds observed labels of shape .* it is stale'):
        DATASETS.build(dict(type='SPMLDataset', data_root=str(root),
                            split='train', pipeline=[]))


def test_score_teacher_never_writes_over_its_input(tiny_demo, tmp_path):
    """The command a refusal once advised (--scores OLD --out OLD
    --overwrite) is refused: the file it reads is kept."""
    scores = tmp_path / 'old.npz'
    scores.write_bytes(b'the scores of my own tagger')
    code, log = run('score_teacher', 'configs/vlpl/vlpl_vgg11bn_demo.py',
                    '--source', 'file', '--scores', str(scores), '--out',
                    str(scores), '--overwrite', '--cfg-options',
                    f'train_dataloader.dataset.data_root={tiny_demo}')
    assert code == 1
    assert f"--out {scores} is one of this run's inputs" in log
    assert scores.read_bytes() == b'the scores of my own tagger'
