"""Every method's training step compiled as MMEngine's ``compile`` does it
(``torch.compile`` of ``train_step``) computes what the eager step does.

A tiny ResNet with each method's head, loss, label bank and data
preprocessor as its ResNet-50 COCO config builds them, trained three steps
compiled and three steps eagerly from the same weights on the same batches:
the losses agree to rounding. The backend is ``aot_eager``, the graphs that
``backend='cudagraphs'`` replays on a GPU (its capture needs CUDA).
"""
import copy
import os.path as osp

import pytest
import torch
from mmengine.config import Config

import spml_mm  # noqa: F401
from spml_mm.apis import get_method
from tests.conftest import REPO
from tests.models.test_no_host_sync import CONFIGS, batch
from tests.models.test_no_host_sync import build as tiny_model
from benchmark.spml_setups import num_views


def build(name):
    cfg = Config.fromfile(
        osp.join(REPO, get_method(CONFIGS[name]).config('coco')))
    preprocessor = dict(cfg.data_preprocessor)
    if preprocessor.get('type', 'ClsDataPreprocessor') == \
            'ClsDataPreprocessor':
        preprocessor['type'] = 'SPMLDataPreprocessor'
    parts = ('backbone', 'neck', 'head', 'data_preprocessor')
    classifier = {k: v for k, v in cfg.model.items() if k not in parts}
    model, wrapper = tiny_model(cfg, cfg.model.head, preprocessor, 'cpu',
                                classifier=classifier)
    views = num_views(cfg) if preprocessor['type'] == \
        'MultiViewDataPreprocessor' else 1
    return model, wrapper, cfg.model.head.num_classes, views


@pytest.mark.slow
@pytest.mark.parametrize('name', CONFIGS)
def test_compiled_step_computes_the_eager_losses(name):
    # fixed weights: a method with a threshold (LASD's p > tau) may flip a
    # pseudo label on a rounding difference when a random p starts near tau
    torch.manual_seed(0)
    compiled, wrapper, num_classes, views = build(name)
    eager, eager_wrapper, _, _ = build(name)
    eager.load_state_dict(compiled.state_dict())
    torch._dynamo.reset()
    step = torch.compile(compiled.train_step, backend='aot_eager')
    for _ in range(3):
        data = batch(views, num_classes)
        ours = step(copy.deepcopy(data), wrapper)
        theirs = eager.train_step(data, eager_wrapper)
        assert ours.keys() == theirs.keys()
        for key in ours:
            torch.testing.assert_close(ours[key], theirs[key], rtol=1e-5,
                                       atol=1e-6, msg=key)
    torch._dynamo.reset()
