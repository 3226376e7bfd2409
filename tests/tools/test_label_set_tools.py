"""Label sets the way a user reaches them: tools/calibrate.py, predict.py,
test.py and export_onnx.py on a model trained by tools/train.py."""
import glob
import json
import os.path as osp
import re
import subprocess

import mmcv
import numpy as np
import pytest

from spml_mm.datasets import make_demo_dataset
from spml_mm.utils import find_best_checkpoint
from tests.conftest import PYTHON, REPO
from tests.tools.test_train_test import tiny_options

CONFIG = 'configs/an/an_vgg11bn_demo.py'
pytestmark = pytest.mark.slow


def tool(*args, check=True):
    proc = subprocess.run([PYTHON, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    if check and proc.returncode != 0:
        pytest.fail(f'{args} failed:\n{proc.stdout[-3000:]}\n'
                    f'{proc.stderr[-3000:]}')
    return proc


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """A demo dataset of 480 official-train (96 validation) and 60 test
    images, and 2 epochs of AN on it: (data root, options, checkpoint)."""
    root = str(tmp_path_factory.mktemp('label_sets_data'))
    make_demo_dataset(root, num_train=480, num_test=60, seed=0)
    options = tiny_options(root, 2)
    work = str(tmp_path_factory.mktemp('label_sets') / 'run')
    tool('tools/train.py', CONFIG, '--work-dir', work, *options)
    return root, options, find_best_checkpoint(work)


def val_observed(root):
    """The val images and their observed labels (N, C), as calibrate.py
    sees them."""
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    init_default_scope('mmpretrain')
    dataset = DATASETS.build(
        dict(type='SPMLDataset', data_root=root, split='val',
             val_labels='observed', pipeline=[]))
    observed = np.zeros((len(dataset), 10), dtype=int)
    paths = []
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        observed[i, info['gt_label']] = 1
        paths.append(info['img_path'])
    return paths, observed


def predictions(out):
    with open(out) as f:
        found = json.load(f)
    return found, np.array([p['scores'] for p in found['predictions']])


def test_calibrate_then_predict_and_test(trained, tmp_path):
    root, options, checkpoint = trained
    thresholds_file = str(tmp_path / 'thresholds.json')
    out = tool('tools/calibrate.py', CONFIG, checkpoint, '--method',
               'conformal', '--alpha', '0.3', '--out', thresholds_file,
               *options).stdout
    assert f"recorded the decision (conformal) in {checkpoint}'s meta" in out
    assert f'wrote {thresholds_file}' in out
    with open(thresholds_file) as f:
        record = json.load(f)
    thresholds = np.array(record['thresholds'])

    # the recall guarantee on the calibration positives, from predict.py's
    # scores of the same images: t_k is the floor(alpha (n + 1))-th lowest
    paths, observed = val_observed(root)
    listed = tmp_path / 'val.txt'
    listed.write_text('\n'.join(paths))
    tool('tools/predict.py', CONFIG, checkpoint, str(listed), '--out',
         str(tmp_path / 'val.json'), *options)
    found, scores = predictions(tmp_path / 'val.json')
    assert found['thresholds'].startswith(f"{checkpoint}'s meta (conformal")
    np.testing.assert_array_equal(record['positives'], observed.sum(0))
    for k in range(10):
        pos = np.sort(scores[observed[:, k] == 1, k])
        rank = int(np.floor(0.3 * (len(pos) + 1)))
        assert thresholds[k] == pytest.approx(pos[rank - 1], abs=1e-6)
    # every image's label set is its classes scoring at least t_k
    for entry, row in zip(found['predictions'], scores):
        expected = {str(k) for k in np.flatnonzero(row >= thresholds)}
        assert set(entry['labels']) == expected

    # tools/test.py: mAP unchanged, the F1 family at these thresholds as
    # computed here from predict.py's test-set scores and the true labels
    test_images = sorted(glob.glob(osp.join(root, 'images', 'val', '*')))
    tool('tools/predict.py', CONFIG, checkpoint, osp.join(root, 'images',
                                                          'val'),
         '--out', str(tmp_path / 'test.json'), *options)
    _, test_scores = predictions(tmp_path / 'test.json')
    labels = np.load(osp.join(root, 'formatted_val_labels.npy')) == 1
    assert len(test_images) == len(labels)
    pred = test_scores >= thresholds
    tp, npred, npos = ((pred & labels).sum(0), pred.sum(0), labels.sum(0))
    cp = np.mean(100 * tp / np.maximum(npred, 1))
    cr = np.mean(100 * tp / np.maximum(npos, 1))
    op, orr = 100 * tp.sum() / pred.sum(), 100 * tp.sum() / labels.sum()

    def metric(out, key):
        return float(re.findall(rf'{key}: ([\d.]+)', out)[-1])

    calibrated = tool('tools/test.py', CONFIG, checkpoint, '--work-dir',
                      str(tmp_path / 'test'), *options).stdout
    assert f"decision: {checkpoint}'s meta (conformal, alpha 0.3" in \
        calibrated
    assert metric(calibrated, 'spml/CP') == pytest.approx(cp, abs=1e-3)
    assert metric(calibrated, 'spml/CR') == pytest.approx(cr, abs=1e-3)
    assert metric(calibrated, 'spml/CF1') == pytest.approx(
        2 * cp * cr / (cp + cr), abs=1e-3)
    assert metric(calibrated, 'spml/OF1') == pytest.approx(
        2 * op * orr / (op + orr), abs=1e-3)
    plain = tool('tools/test.py', CONFIG, checkpoint, '--work-dir',
                 str(tmp_path / 'test'), '--thresholds', 'none',
                 '--out-scores', str(tmp_path / 'scores.npz'),
                 *options).stdout
    with np.load(tmp_path / 'scores.npz') as dumped:
        np.testing.assert_allclose(dumped['scores'], test_scores,
                                   atol=1e-6)
        np.testing.assert_array_equal(dumped['known'] == 1, labels)
        np.testing.assert_array_equal(dumped['sample_idx'],
                                      np.arange(len(labels)))
    assert metric(plain, 'spml/mAP') == metric(calibrated, 'spml/mAP')
    pred = test_scores >= 0.5
    assert metric(plain, 'spml/OR') == pytest.approx(
        100 * (pred & labels).sum() / labels.sum(), abs=1e-3)

    # the exported graph gives predict.py's label sets
    onnx = str(tmp_path / 'model.onnx')
    out = tool('tools/export_onnx.py', CONFIG, checkpoint, '--out', onnx,
               '--verify', '8', *options).stdout
    assert 'label sets equal' in out
    import onnxruntime
    session = onnxruntime.InferenceSession(
        onnx, providers=['CPUExecutionProvider'])
    images = np.stack([mmcv.imread(p).transpose(2, 0, 1)
                       for p in test_images]).astype(np.float32)
    onnx_scores, onnx_labels = session.run(None, {'images': images})
    np.testing.assert_array_equal(onnx_labels, test_scores >= thresholds)
    np.testing.assert_allclose(onnx_scores, test_scores, atol=1e-5)


def test_calibrate_estimates_labels_per_image(trained, tmp_path):
    # nothing but the config and checkpoint: class-prior matching with m
    # estimated from the validation scores and observed positives, printed
    # with each class's prior and recorded
    root, options, checkpoint = trained
    out_file = str(tmp_path / 'estimated.json')
    out = tool('tools/calibrate.py', CONFIG, checkpoint, '--out', out_file,
               *options).stdout
    with open(out_file) as f:
        record = json.load(f)
    m = record['estimated_positives_per_image']
    assert record['method'] == 'prior' and record['positives_per_image'] == m
    assert f'estimated labels per image: {m:.2f}' in out
    assert 1 <= m <= 10 and len(record['estimated_priors']) == 10
    for c, p in zip(record['classes'], record['estimated_priors']):
        assert re.search(rf'^{c} .* {p:.3f}$', out, re.M)
    _, observed = val_observed(root)
    assert record['positives'] == observed.sum(0).tolist()
    # the checkpoint copied alone decides by the record calibrate wrote
    # into it: exactly the calibrated sets
    copy = str(tmp_path / 'copied_alone.pth')
    import shutil
    shutil.copy(checkpoint, copy)
    images = osp.join(root, 'images', 'val')
    out = tool('tools/predict.py', CONFIG, copy, images, '--out',
               str(tmp_path / 'copy.json'), *options).stdout
    assert f"decision: {copy}'s meta (prior, on " in out
    found, scores = predictions(tmp_path / 'copy.json')
    expected = scores.astype(np.float32) >= np.float32(record['thresholds'])
    for entry, row in zip(found['predictions'], expected):
        assert set(entry['labels']) == {str(k) for k in np.flatnonzero(row)}
    # --positives-per-image still overrides the estimate
    out = tool('tools/calibrate.py', CONFIG, checkpoint, '--out', out_file,
               '--positives-per-image', '2', *options).stdout
    assert 'estimated labels per image' not in out
    with open(out_file) as f:
        record = json.load(f)
    assert record['positives_per_image'] == 2
    assert 'estimated_positives_per_image' not in record


def test_inferencer_from_python(trained):
    from spml_mm.apis import SPMLInferencer
    root, _, checkpoint = trained
    images = sorted(glob.glob(osp.join(root, 'images', 'val', '*')))[:5]
    infer = SPMLInferencer(CONFIG, checkpoint, thresholds='none',
                           device='cpu')
    results = infer(images + ['missing.png'], batch_size=2)
    assert results[-1] == {'error': results[-1]['error']}
    assert 'missing.png' in results[-1]['error']
    for r in results[:-1]:
        expected = np.flatnonzero(r['pred_scores'] >= 0.5)
        assert sorted(r['pred_label']) == sorted(expected)
        assert r['pred_class'] == [str(k) for k in r['pred_label']]


def test_bad_inputs_are_named(trained, tmp_path):
    root, options, checkpoint = trained
    # too few observed positives: every short class named, nothing written
    out = tool('tools/calibrate.py', CONFIG, checkpoint, '--method',
               'conformal', '--alpha', '0.05', '--out',
               str(tmp_path / 't.json'), *options, check=False)
    assert out.returncode != 0
    assert re.search(r'classes have fewer than 19 observed positives.*'
                     r"'\d' \(\d+\)", out.stderr)
    assert not osp.exists(tmp_path / 't.json')
    out = tool('tools/calibrate.py', CONFIG, checkpoint, '--alpha', '1.5',
               check=False)
    assert 'alpha must be in (0, 1)' in out.stderr

    # a thresholds file of another model, or with bad values
    other = dict(format='spml-mm thresholds 1', method='conformal',
                 calibration_images=9, classes=['cat', 'dog'],
                 thresholds=[0.5, 0.5])
    bad = tmp_path / 'other.json'
    bad.write_text(json.dumps(other))
    image = sorted(glob.glob(osp.join(root, 'images', 'val', '*')))[0]
    out = tool('tools/predict.py', CONFIG, checkpoint, image,
               '--thresholds', str(bad), check=False)
    assert out.returncode != 0
    assert (f'{bad} was calibrated for another model than {checkpoint}: '
            'the file has 2 classes, the model 10') in out.stderr
    other.update(classes=[str(k) for k in range(10)],
                 thresholds=[0.5] * 9 + [float('nan')])
    bad.write_text(json.dumps(other))
    out = tool('tools/test.py', CONFIG, checkpoint, '--thresholds', str(bad),
               *options, check=False)
    assert "thresholds must be numbers in [0, 1]; 1 are not: '9': nan" in \
        out.stderr

    # an undecodable image is named, the rest predicted; an empty folder
    (tmp_path / 'imgs').mkdir()
    (tmp_path / 'imgs' / 'broken.png').write_text('not an image')
    out = tool('tools/predict.py', CONFIG, checkpoint, str(tmp_path / 'imgs'),
               image, '--thresholds', 'none', check=False)
    assert out.returncode == 1
    assert 'broken.png: cannot be read: not a decodable image' in out.stdout
    assert re.search(rf'{re.escape(image)}: ', out.stdout)
    (tmp_path / 'empty').mkdir()
    out = tool('tools/predict.py', CONFIG, checkpoint,
               str(tmp_path / 'empty'), check=False)
    assert 'a folder without images' in out.stderr
