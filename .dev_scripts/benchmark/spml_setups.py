"""The SPML configs' pieces that the speed entry points measure: configs by
method, random targets and samples, a label bank after a run's updates."""
import copy
import os.path as osp
from typing import Dict, List, Optional

import torch
from mmengine.config import Config
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from spml_mm.apis import get_method, list_methods
from spml_mm.models.label_banks import LabelBank
from benchmark.common import REPO

REFERENCE = dict(type='CrossEntropyLoss', use_sigmoid=True)
#: the label banks the bank timings update: dataset -> (samples, classes)
SIZES = {'NUS-WIDE': (150000, 81), 'COCO': (82081, 80)}


def method_configs(dataset: str) -> Dict[str, str]:
    """Every method's ResNet-50 config of a dataset, by table label, in the
    configs' order."""
    found = {get_method(m).label: get_method(m).config(dataset)
             for m in list_methods(variants=True, suite=dataset)}
    return dict(sorted(found.items(), key=lambda item: item[1]))


def load(path: str) -> Config:
    return Config.fromfile(osp.join(REPO, path))


def pseudo_label_hook(cfg: Config) -> Optional[dict]:
    hooks = [h for h in [*(cfg.get('default_hooks') or {}).values(),
                         *cfg.get('custom_hooks', [])]
             if h and h['type'] == 'SPMLPseudoLabelHook']
    return hooks[0] if hooks else None


def head_config(cfg: Config) -> dict:
    """A copy of the config's head as its classifier builds it: IGNORE's
    classifier gives its loss the head's classes."""
    head = copy.deepcopy(cfg.model.head)
    if cfg.model.get('type') == 'IGNOREClassifier':
        head.loss.setdefault('num_classes', head.num_classes)
    return head


def classifier_logits(cfg: Config, batch: int, num_classes: int,
                      generator: torch.Generator) -> Dict[str, torch.Tensor]:
    """What a config's classifier passes its loss beside the head's logits
    (random, fixed): IGNORE's logits of the masked images and of the strong
    views, whose backbone passes the loss and head tables leave out; {}
    for the other classifiers."""
    if cfg.model.get('type') != 'IGNOREClassifier':
        return {}
    z = torch.randn(2, batch, num_classes, generator=generator) * 3
    return dict(mask_logits=z[0], strong_logits=z[1])


def num_views(cfg: Config) -> int:
    for step in cfg.train_dataloader.dataset.pipeline:
        if step['type'] == 'MultiView':
            views = step['num_views']
            return sum(views) if isinstance(views, (list, tuple)) else views
    return 1


def one_positive(batch: int, num_classes: int,
                 generator: torch.Generator) -> torch.Tensor:
    target = torch.zeros(batch, num_classes)
    target[torch.arange(batch),
           torch.randint(num_classes, (batch, ), generator=generator)] = 1
    return target


def samples_of(target: torch.Tensor) -> List[DataSample]:
    samples = []
    for idx, row in enumerate(target):
        sample = DataSample(metainfo=dict(sample_idx=idx))
        samples.append(sample.set_gt_label(row.nonzero()[:, 0]))
    return samples


def trained_bank(cfg: Config, target: torch.Tensor,
                 generator: torch.Generator) -> LabelBank:
    """The head's label bank after every update of a run, on random scores
    of the rows of ``target`` (as allocated where the config updates it in
    the training step: LL-Cp's corrections, ROLE's estimates)."""
    head = cfg.model.head
    bank = MODELS.build(head.label_bank,
                        default_args=dict(num_classes=head.num_classes))
    bank.allocate(len(target))
    hook = pseudo_label_hook(cfg)
    if hook is None:
        return bank
    updater = MODELS.build(hook['updater'])
    scores = torch.rand(target.shape, generator=generator)
    max_epochs, warmup = cfg.train_cfg.max_epochs, hook['warmup_epochs']
    for epoch in range(warmup, max_epochs):
        updater.update(bank, scores, target.bool(), epoch, max_epochs, warmup)
    return bank


def start_schedules(module: torch.nn.Module, cfg: Config,
                    epoch: int = 0) -> None:
    """What SPMLEpochHook does before ``epoch`` (the first by default)."""
    for m in module.modules():
        if callable(getattr(m, 'set_epoch', None)):
            m.set_epoch(epoch, cfg.train_cfg.max_epochs)
