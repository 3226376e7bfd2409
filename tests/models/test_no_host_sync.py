"""No SPML head adds an operation that makes the host wait on the GPU.

One ``train_step`` of a tiny ResNet with each method's head, loss, label
bank and data preprocessor as its ResNet-50 COCO config builds them, against
the same step with MMPretrain's ``MultiLabelLinearClsHead`` and sigmoid BCE,
counted by :mod:`tests.sync_counting` on the meta device (which stands in
for the GPU). A method passes when the step after the data preprocessor
reads no device value, makes no data-dependent shape and copies nothing from
the host more than the stock step; the data preprocessors are compared in
``test_spml_data_preprocessor.py``.
"""
import copy
import os.path as osp
from collections import Counter

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401  (registers the plugin)
from spml_mm.apis import get_method, list_methods
from tests.conftest import REPO
from tests.sync_counting import count_syncs
from benchmark.gpu_steps import TINY_BACKBONE
from benchmark.spml_setups import num_views, start_schedules

BATCH, SIZE, NUM_SAMPLES = 4, 32, 16

#: every method with a ResNet-50 COCO config
METHODS = list_methods(variants=True, suite='coco')
#: their table labels (the GPU tier's and the compiled step's test ids)
CONFIGS = {get_method(m).label: m for m in METHODS}


def build(cfg, head, data_preprocessor, device='meta', classifier=None):
    """A tiny ResNet with ``head`` and ``data_preprocessor`` on ``device``
    (meta: the synchronisation count's stand-in for a GPU), in an epoch
    where every schedule runs, and its ``cfg.optim_wrapper``;
    ``classifier``: the config's model type and options (IGNORE's), else
    MMPretrain's ImageClassifier."""
    init_default_scope('mmpretrain')
    model = MODELS.build(
        dict(classifier or dict(type='ImageClassifier'),
             backbone=TINY_BACKBONE,
             neck=dict(type='GlobalAveragePooling'),
             head=dict(head, in_channels=64),
             data_preprocessor=data_preprocessor))
    bank = getattr(model.head, 'label_bank', None)
    if bank is not None:
        bank.allocate(NUM_SAMPLES)
    # an epoch where every schedule runs (LL: k > 0; LL-Cp corrects;
    # IGNORE: past its warm-up)
    start_schedules(model, cfg, epoch=max(
        2, *(getattr(m, 'warm_up', 0) for m in model.modules())))
    model = model.to(device).train()
    return model, build_optim_wrapper(model, copy.deepcopy(cfg.optim_wrapper))


def batch(num_views, num_classes, full=False):
    """A pseudo-collated training batch of uint8 images: per sample one
    image, or (MultiView) a list of views; ``full``: with true labels
    ``gt_label_full`` of as many classes as the sample's index."""
    g = torch.Generator().manual_seed(0)

    def image():
        return torch.randint(0, 256, (3, SIZE, SIZE), dtype=torch.uint8,
                             generator=g)

    samples = [
        DataSample(metainfo=dict(sample_idx=3 * i)).set_gt_label(
            [(5 * i) % num_classes]) for i in range(BATCH)
    ]
    for i, sample in enumerate(samples if full else ()):
        sample.set_field(torch.arange(i + 1), 'gt_label_full')
    if num_views == 1:
        return dict(inputs=[image() for _ in range(BATCH)],
                    data_samples=samples)
    return dict(inputs=[[image() for _ in range(BATCH)]
                        for _ in range(num_views)], data_samples=samples)


def step_syncs(model, wrapper, data):
    with count_syncs(model.data_preprocessor) as counter:
        model.train_step(data, wrapper)
    return counter


def added_syncs(key, bank_options=None, full=False):
    """The synchronising events, by kind, that method ``key``'s step
    makes beyond the stock step, and the events of its step."""
    cfg = Config.fromfile(osp.join(REPO, get_method(key).config('coco')))
    head = copy.deepcopy(cfg.model.head)
    if bank_options:
        head.label_bank.update(bank_options)
    preprocessor = dict(cfg.data_preprocessor)
    preprocessor.setdefault('type', 'ClsDataPreprocessor')
    views = num_views(cfg) if preprocessor['type'] == \
        'MultiViewDataPreprocessor' else 1
    classifier = {
        k: v
        for k, v in cfg.model.items()
        if k not in ('backbone', 'neck', 'head', 'data_preprocessor')
    }
    stock = build(
        cfg,
        dict(type='MultiLabelLinearClsHead', num_classes=head.num_classes,
             loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
        dict(cfg.data_preprocessor, type='ClsDataPreprocessor'))
    spml = build(cfg, head, preprocessor, classifier=classifier)
    if full:
        spml[0].head.label_bank.start_recording()
    reference = step_syncs(*stock, batch(1, head.num_classes, full))
    counted = step_syncs(*spml, batch(views, head.num_classes, full))
    # the step ran to the optimizer's update, which gave it its state
    assert spml[1].optimizer.state
    # the stock step waits on nothing after its data preprocessor either
    assert reference.syncs('model') == []
    added = Counter(e.kind for e in counted.syncs('model')) - Counter(
        e.kind for e in reference.syncs('model'))
    return added, spml[0], counted


@pytest.mark.parametrize('key', METHODS)
def test_head_adds_no_synchronisation(key):
    added, _, counted = added_syncs(key)
    assert not added, f'{key} adds {dict(added)}:\n' + '\n'.join(
        map(str, counted.syncs('model')))


@pytest.mark.parametrize('storage', ['full', 'uint8'])
def test_recording_compact_bank_adds_no_synchronisation(storage):
    """The label bank's other paths in the step: keeping the epoch's scores
    with the true labels (``record``), and the 2-bit states of a compact
    bank (decoded by a table look-up, written by LL-Cp's corrections)."""
    for key in ('em_apl', 'll_cp'):
        added, model, counted = added_syncs(key, dict(storage=storage),
                                            full=True)
        assert not added, f'{key} adds {dict(added)}:\n' + '\n'.join(
            map(str, counted.syncs('model')))
        # the batch's scores were kept with its true labels (meta tensors:
        # shapes only)
        records = model.head.label_bank.stop_recording()
        assert len(records) == 1 and records[0].full.shape == (BATCH, 80)


SYNCS = {
    'item': lambda x: x.sum().item(),
    'bool': lambda x: bool(x.any()),
    'float': lambda x: float(x.sum()),
    'tolist': lambda x: x.tolist(),
    'cpu': lambda x: x.cpu(),
    'to': lambda x: x.to('cpu'),
    'numpy': lambda x: x.numpy(),
    'nonzero': lambda x: x.nonzero(),
    'mask index': lambda x: x[x > 0],
    'mask assignment': lambda x: x.__setitem__(x > 0, x.new_zeros(())),
    'unique': lambda x: x.unique(),
    'blocking copy': lambda x: torch.ones(3).to(x.device),
    'linalg status': lambda x: torch.linalg.cholesky(
        torch.eye(2, device=x.device)),
}


@pytest.mark.parametrize('sync', SYNCS)
def test_the_counter_sees_every_synchronisation(sync):
    x = torch.ones(4, device='meta')
    with count_syncs() as counter:
        SYNCS[sync](x)
    assert len(counter.syncs('model')) == 1, counter.events


def test_the_counter_passes_what_does_not_wait():
    x = torch.ones(4, device='meta')
    with count_syncs() as counter:
        y = torch.ones(3).to(x.device, non_blocking=True)
        (x * 2).exp().sum()
        torch.linalg.cholesky_ex(torch.eye(2, device=x.device))
        x.new_ones(()).to('meta')
    assert counter.syncs('model') == []
    assert [e.kind for e in counter.events] == ['async copy']
    assert y.device.type == 'meta'
