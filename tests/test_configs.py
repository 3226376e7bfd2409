"""Every config in configs/ builds, and every backbone/head pairing trains.

Pretrained weights are not loaded (no network in CI) and the datasets are not
built (the real data is absent); each distinct pairing of backbone, head,
loss, label bank, consistency term and data preprocessor runs one training
iteration (``model.train_step``, with the config's optimizer) on two random
images of the smallest size its backbone takes.
"""
import functools
import glob
import json
import os.path as osp
import re

import pytest
import torch
import yaml
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401  (registers the plugin)
from tests.conftest import REPO
from analysis.loading import build_model
from benchmark.spml_setups import num_views

CONFIGS = sorted(
    osp.relpath(p, REPO)
    for p in glob.glob(osp.join(REPO, 'configs', '*', '*.py'))
    if '_base_' not in p)

#: Side of the square test images per backbone: the 48 px demo images for
#: the demo VGG, 224 px for Swin (its last stage must hold one 7x7 window),
#: and small images elsewhere (ViT resizes its position embedding).
INPUT_SIZE = dict(
    VGG=48, ResNet=64, ConvNeXt=64, VisionTransformer=32,
    SwinTransformer=224, TIMMBackbone=64)

MMPRETRAIN_ZOO = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'configs')


@pytest.fixture(scope='module', autouse=True)
def one_thread():
    """One intra-op thread: on a shared 2-core machine, two spinning threads
    are several times slower than one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    init_default_scope('mmpretrain')
    yield
    torch.set_num_threads(threads)


@functools.lru_cache(maxsize=None)
def load(path):
    """The parsed config (cached: parsing resolves MMPretrain's bases)."""
    return Config.fromfile(osp.join(REPO, path))


def zoo_weights():
    """Every checkpoint URL listed in MMPretrain's model-zoo metafiles."""
    urls = set()
    for path in glob.glob(osp.join(MMPRETRAIN_ZOO, '*', 'metafile.yml')):
        with open(path) as f:
            urls.update(re.findall(r'Weights:\s*(\S+)', f.read()))
    return urls


def model_index():
    """{config path: model entry} over the metafiles that model-index.yml
    imports, and the imported metafile paths."""
    with open(osp.join(REPO, 'model-index.yml')) as f:
        imports = yaml.safe_load(f)['Import']
    models = {}
    for metafile in imports:
        with open(osp.join(REPO, metafile)) as f:
            meta = yaml.safe_load(f)
        collections = {c['Name']: c for c in meta['Collections']}
        for model in meta['Models']:
            assert model['Config'] not in models, f'{model["Config"]} twice'
            assert model['In Collection'] in collections, model['Name']
            models[model['Config']] = model
    return models, imports


def test_model_index_lists_every_config():
    models, imports = model_index()
    assert sorted(models) == CONFIGS
    assert sorted(imports) == sorted(
        osp.relpath(p, REPO)
        for p in glob.glob(osp.join(REPO, 'configs', '*', 'metafile.yml')))
    names = [m['Name'] for m in models.values()]
    assert len(set(names)) == len(names)


def test_every_method_folder_has_a_readme_naming_its_configs():
    for folder in {osp.dirname(p) for p in CONFIGS}:
        with open(osp.join(REPO, folder, 'README.md')) as f:
            readme = f.read()
        assert '```bibtex' in readme, folder
        for path in CONFIGS:
            if osp.dirname(path) == folder:
                name = osp.basename(path)
                assert f']({name})' in readme, f'{folder}/README.md: {name}'


def test_every_method_has_configs():
    methods = {p.split('/')[1] for p in CONFIGS}
    assert {'an', 'grloss', 'lasd'} <= methods, methods
    assert 'configs/an/resnet50_voc.py' in CONFIGS


@pytest.mark.parametrize('path', CONFIGS)
def test_config_builds(path):
    cfg = load(path)
    model = build_model(cfg)
    head = model.head
    # the head, the data preprocessor and the dataset agree on the classes
    assert head.num_classes == cfg.num_classes
    assert cfg.data_preprocessor.num_classes == cfg.num_classes
    assert head.fc.in_features == cfg.model.head.in_channels
    init = cfg.model.backbone.get('init_cfg') or {}
    checkpoint = init.get('checkpoint', '')
    if 'demo' in path:
        assert not checkpoint, 'demo configs train from scratch'
    elif cfg.model.backbone.type == 'PrecomputedFeatures':
        # the linear regime: a frozen backbone's cached features
        assert not checkpoint
    elif cfg.model.backbone.type == 'TIMMBackbone':
        # tools/convert_efficientnet_lite.py's output
        assert checkpoint == 'checkpoints/efficientnet-lite0_timm.pth'
        assert init.get('prefix') == 'backbone.'
    elif checkpoint.startswith('http'):
        # an MMPretrain classifier checkpoint: the backbone's weights only
        assert checkpoint in zoo_weights(), checkpoint
        assert init.get('prefix') == 'backbone'
    else:
        assert checkpoint.startswith('torchvision://'), checkpoint


def pairing(cfg):
    """What distinguishes one backbone/head pairing from another."""
    backbone = {k: v for k, v in cfg.model.backbone.items() if k != 'init_cfg'}
    head = cfg.model.head
    return json.dumps(
        dict(
            backbone=backbone,
            neck=cfg.model.get('neck'),
            head=head.type,
            loss=head.loss.type,
            label_bank=(head.get('label_bank') or {}).get('type'),
            consistency=(head.get('consistency') or {}).get('type'),
            preprocessor=cfg.data_preprocessor.get('type'),
            views=num_views(cfg)),
        sort_keys=True,
        default=str)


def pairings():
    found = {}
    for path in CONFIGS:
        found.setdefault(pairing(load(path)), path)
    return sorted(found.values())


def tiny_batch(cfg, size, views, generator):
    """Two random images (or cached features) with one observed positive
    each."""
    samples = []
    for idx in range(2):
        positive = int(torch.randint(cfg.num_classes, (1, ),
                                     generator=generator))
        sample = DataSample(metainfo=dict(sample_idx=idx))
        sample.set_gt_label([positive])
        sample.set_field(torch.tensor([positive]), 'gt_label_full')
        samples.append(sample)

    def images():
        if cfg.model.backbone.type == 'PrecomputedFeatures':
            return [
                torch.randn(cfg.model.backbone.feature_dim, 1, 1,
                            generator=generator) for _ in samples
            ]
        return [
            torch.randint(0, 256, (3, size, size), dtype=torch.uint8,
                          generator=generator) for _ in samples
        ]

    inputs = images() if views == 1 else [images() for _ in range(views)]
    return dict(inputs=inputs, data_samples=samples)


@pytest.mark.parametrize('path', pairings())
def test_one_training_iteration(path):
    cfg = load(path)
    torch.manual_seed(0)
    model = build_model(cfg)
    model.train()
    for module in model.modules():
        # label banks and other per-sample state (ROLE's table)
        if callable(getattr(module, 'allocate', None)):
            module.allocate(2)
        if callable(getattr(module, 'set_epoch', None)):
            module.set_epoch(0, cfg.train_cfg.max_epochs)
    optim_wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    size = INPUT_SIZE.get(cfg.model.backbone.type)
    data = tiny_batch(cfg, size, num_views(cfg),
                      torch.Generator().manual_seed(0))
    head_before = model.head.fc.weight.detach().clone()
    backbone_before = [
        p.detach().clone() for p in model.backbone.parameters()
        if p.requires_grad
    ]

    losses = model.train_step(data, optim_wrapper)

    assert losses and all(
        torch.isfinite(torch.as_tensor(v)).all() for v in losses.values())
    if cfg.model.head.get('consistency'):
        assert 'loss_consistency' in losses
    # the optimizer step reached the head and, through it, the backbone
    # (a backbone of cached features has nothing to train)
    assert not torch.equal(model.head.fc.weight, head_before)
    after = [p for p in model.backbone.parameters() if p.requires_grad]
    assert after or cfg.model.backbone.type == 'PrecomputedFeatures'
    assert not after or sum(not torch.equal(a, b) for a, b in zip(
        after, backbone_before)) > len(after) // 2
