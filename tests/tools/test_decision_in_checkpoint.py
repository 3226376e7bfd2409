"""The decision travels with the model (issue 55, parts 3-4): calibrate.py
records it in the checkpoint's meta (weights untouched, still a
weights_only checkpoint), a checkpoint copied alone predicts its calibrated
sets, a record that does not fit the model is refused naming both sides,
every reader says which decision it uses, and the TorchServe handler
answers label sets from it. In this process, on models built here (no
training) and the session's small demo dataset."""
import argparse
import json
import os
import os.path as osp
import shutil
import sys
import types

import numpy as np
import pytest
import torch
from mmengine.config import Config

from tests.conftest import REPO
from tests.tools.test_label_set_refusals import CONFIG, run, save_model, tool


@pytest.fixture(scope='module')
def calibrated(tiny_demo, tmp_path_factory):
    """a.pth calibrated by tools/calibrate.py (its content before, the log)
    and b.pth of other weights, never calibrated."""
    folder = tmp_path_factory.mktemp('decision_in_checkpoint')
    a = save_model(str(folder / 'a.pth'), 0)
    b = save_model(str(folder / 'b.pth'), 1)
    before = torch.load(a, weights_only=True)
    options = ['--cfg-options'] + [
        f'{split}_dataloader.dataset.data_root={tiny_demo}'
        for split in ('train', 'val', 'test')]
    code, log = run('calibrate', CONFIG, a, '--positives-per-image', '2',
                    '--device', 'cpu', *options)
    assert code == 0, log
    return argparse.Namespace(folder=folder, a=a, b=b, before=before,
                              log=log, options=options,
                              images=osp.join(tiny_demo, 'images', 'val'))


def test_calibrate_records_the_decision_in_the_checkpoint(calibrated):
    a = calibrated.a
    assert f"recorded the decision (prior) in {a}'s meta" in calibrated.log
    # no file beside it, none half-written
    assert sorted(os.listdir(calibrated.folder)) == ['a.pth', 'b.pth']
    after = torch.load(a, weights_only=True)  # plain types only
    before = calibrated.before
    assert after['state_dict'].keys() == before['state_dict'].keys()
    for key, value in before['state_dict'].items():
        assert torch.equal(after['state_dict'][key], value), key
    assert after['meta']['dataset_meta'] == before['meta']['dataset_meta']
    assert set(after) == set(before)
    record = after['meta']['spml_decision']
    assert record['format'] == 'spml-mm thresholds 1'
    assert record['method'] == 'prior' and len(record['thresholds']) == 10
    assert record['classes'] == [str(k) for k in range(10)]
    assert set(record['fits']) == {'weights_sha256', 'model_sha256'}
    # the record still fits the checkpoint it was written into
    from spml_mm.apis import model_identity
    identity = model_identity(Config.fromfile(osp.join(REPO, CONFIG)), a)
    assert record['fits']['weights_sha256'] == identity['weights_sha256']


def test_a_checkpoint_copied_alone_predicts_its_calibrated_sets(
        calibrated, tmp_path):
    copy = str(tmp_path / 'elsewhere.pth')
    shutil.copy(calibrated.a, copy)
    out = tmp_path / 'preds.json'
    code, log = run('predict', CONFIG, copy, calibrated.images, '--out',
                    str(out), '--device', 'cpu')
    assert code == 0, log
    assert f"decision: {copy}'s meta (prior, on " in log
    found = json.loads(out.read_text())
    record = torch.load(copy, weights_only=True)['meta']['spml_decision']
    scores = np.array([p['scores'] for p in found['predictions']])
    from spml_mm.apis import apply_decision
    expected = apply_decision(scores.astype(np.float32), record)
    for entry, row in zip(found['predictions'], expected):
        assert set(entry['labels']) == {str(k) for k in np.flatnonzero(row)}
    # the head's decision when asked, said
    code, log = run('predict', CONFIG, copy, calibrated.images,
                    '--thresholds', 'none')
    assert code == 0 and "decision: the head's (thr=" in log
    # tools/test.py resolves it in the same place and says so
    args = argparse.Namespace(checkpoint=copy, thresholds='auto',
                              allow_other_thresholds=False, cfg_options=None)
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    tool('test').set_thresholds(cfg, args)
    assert cfg.model.head.thresholds == record['thresholds']


def test_a_record_that_does_not_fit_is_refused(calibrated, tmp_path):
    record = torch.load(calibrated.a,
                        weights_only=True)['meta']['spml_decision']
    # a's record copied into b's checkpoint: other weights
    other = torch.load(calibrated.b, weights_only=True)
    other['meta']['spml_decision'] = record
    b = str(tmp_path / 'b.pth')
    torch.save(other, b)
    code, log = run('predict', CONFIG, b, calibrated.images)
    assert code != 0
    assert (f"the decision in {b}'s meta was calibrated for another model "
            f'than {b}: weights: calibrated on {calibrated.a}') in log, log
    # other classes, other count: both sides named
    for classes, words in (([str(k) for k in range(9)],
                            'the file has 9 classes, the model 10'),
                           (['cat'] + [str(k) for k in range(1, 10)],
                            "0: 'cat' / '0'")):
        bad = torch.load(calibrated.a, weights_only=True)
        bad['meta']['spml_decision'] = dict(record, classes=classes,
                                            thresholds=[0.5] * len(classes))
        path = str(tmp_path / 'bad.pth')
        torch.save(bad, path)
        code, log = run('predict', CONFIG, path, calibrated.images)
        assert code != 0 and words in log, log
    # with a decision set by --cfg-options: both named
    code, log = run('predict', CONFIG, calibrated.a, calibrated.images,
                    '--cfg-options', 'model.head.thr=0.3')
    assert code != 0
    assert (f"--cfg-options model.head.thr=0.3 and the decision in "
            f"{calibrated.a}'s meta") in log, log


def test_the_serving_handler_answers_label_sets(calibrated, monkeypatch):
    from spml_mm.apis import LabelSetService
    names = sorted(os.listdir(calibrated.images))[:3]
    paths = [osp.join(calibrated.images, n) for n in names]
    requests = []
    for p in paths:
        with open(p, 'rb') as f:
            requests.append(dict(body=bytearray(f.read())))
    requests.append(dict(data=b'not an image'))
    service = LabelSetService(osp.join(REPO, CONFIG), calibrated.a, 'cpu')
    assert service.decision.startswith(f"{calibrated.a}'s meta (prior")
    answers = service(requests)
    code, log = run('predict', CONFIG, calibrated.a, *paths)
    for p, answer in zip(paths, answers):
        shown = ', '.join(f'{c} ({s:.2f})' for c, s in
                          zip(answer['labels'], answer['scores']))
        assert f'{p}: {shown or "(no label)"}' in log
    assert answers[3]['error'].endswith('not a decodable image')
    # the TorchServe handler itself, through its three steps (TorchServe's
    # BaseHandler where installed, else a stand-in)
    try:
        import ts.torch_handler.base_handler  # noqa: F401
    except ImportError:
        stub = types.ModuleType('ts.torch_handler.base_handler')
        stub.BaseHandler = type('BaseHandler', (), {})
        for name in ('ts', 'ts.torch_handler'):
            monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
        monkeypatch.setitem(sys.modules, stub.__name__, stub)
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        'spml_handler', osp.join(REPO, 'tools', 'torchserve',
                                 'spml_handler.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model_dir = calibrated.folder / 'archive'
    model_dir.mkdir(exist_ok=True)
    Config.fromfile(osp.join(REPO, CONFIG)).dump(str(model_dir /
                                                     'config.py'))
    shutil.copy(calibrated.a, model_dir / 'model.pth')
    context = argparse.Namespace(
        system_properties=dict(model_dir=str(model_dir), gpu_id=None),
        manifest=dict(model=dict(serializedFile='model.pth')))
    handler = module.SPMLHandler()
    handler.initialize(context)
    found = handler.postprocess(handler.inference(
        handler.preprocess(requests)))
    assert found == answers


def test_the_record_is_written_whole_or_not_at_all(tmp_path):
    """record_in_checkpoint: a checkpoint whose weights changed since they
    were calibrated is refused and kept byte for byte; a link is followed
    (the file it names gets the record, the link stays a link)."""
    from spml_mm.apis import checkpoint_record, record_in_checkpoint
    from spml_mm.apis.thresholds import weights_digest
    path = save_model(str(tmp_path / 'm.pth'), 0)
    with open(path, 'rb') as f:
        before = f.read()
    record = dict(method='topk', classes=[str(k) for k in range(10)],
                  topk=2, calibration_images=5)
    with pytest.raises(ValueError, match='changed while it was calibrated'):
        record_in_checkpoint(path, record, '0' * 16)
    with open(path, 'rb') as f:
        assert f.read() == before
    link = tmp_path / 'latest.pth'
    link.symlink_to('m.pth')
    digest = weights_digest(torch.load(path, weights_only=True))
    record_in_checkpoint(str(link), record, digest)
    found = checkpoint_record(torch.load(path, weights_only=True))
    assert found == dict(format='spml-mm thresholds 1', **record)
    assert link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ['latest.pth', 'm.pth']
