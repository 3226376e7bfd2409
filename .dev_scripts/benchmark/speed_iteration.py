"""A ResNet-50 training iteration with the SPML head against MMPretrain's,
and every method's head as a share of it.

One training iteration (data preprocessor, backbone, neck, head, loss,
backward, optimizer step; no data loading) of ``SPMLLinearClsHead`` against
MMPretrain's ``MultiLabelLinearClsHead`` with the same ResNet-50, and each
method's head (forward, loss, backward, label-bank lookup) on fixed features
as a share of that iteration.

Writes ``speed_iteration.json`` and re-renders ``speed.md`` in ``--out-dir``
(default ``work_dirs/results``; ``docs/results`` for the tracked page).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.speed_iteration --threads 1 --out-dir /tmp/s
"""
import argparse
import copy
import sys
from typing import Callable, Dict

import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.utils import ProgressBar
from mmpretrain.registry import MODELS

from analysis.loading import build_model
from benchmark.measure import interleaved, profile_call
from benchmark.pages.speed import parse_speed_args, report_part
from benchmark.spml_setups import (REFERENCE, classifier_logits,
                                   head_config, load, method_configs,
                                   num_views, one_positive, samples_of,
                                   start_schedules, trained_bank)

ITERATION_CONFIG = 'configs/an/resnet50_coco.py'


def iteration_models(batch: int, size: int):
    """SPMLLinearClsHead and MultiLabelLinearClsHead models with the same
    ResNet-50 weights, their optimizers and a synthetic batch."""
    cfg = load(ITERATION_CONFIG)
    spml = build_model(cfg)
    mm_cfg = copy.deepcopy(cfg)
    mm_cfg.model.head = dict(
        type='MultiLabelLinearClsHead',
        num_classes=cfg.model.head.num_classes,
        in_channels=cfg.model.head.in_channels,
        loss=REFERENCE)
    mm = build_model(mm_cfg)
    mm.load_state_dict(spml.state_dict())
    g = torch.Generator().manual_seed(0)
    target = one_positive(batch, cfg.model.head.num_classes, g)
    data = dict(
        inputs=[
            torch.randint(0, 256, (3, size, size), dtype=torch.uint8,
                          generator=g) for _ in range(batch)
        ],
        data_samples=samples_of(target))
    models = {}
    for name, model in (('SPMLLinearClsHead + ANLoss', spml),
                        ('MMPretrain MultiLabelLinearClsHead + BCE', mm)):
        model.train()
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        models[name] = (model, wrapper)
    return models, data


def head_step(cfg: Config, batch: int, seed: int = 0) -> Callable[[], None]:
    """Forward, loss and backward of a config's head on fixed features."""
    head_cfg = head_config(cfg)
    head = MODELS.build(head_cfg)
    head.train()
    start_schedules(head, cfg)
    g = torch.Generator().manual_seed(seed)
    target = one_positive(batch, head_cfg.num_classes, g)
    samples = samples_of(target)
    if getattr(head, 'label_bank', None) is not None:
        head.label_bank = trained_bank(cfg, target, g)
    feats = torch.randn(num_views(cfg) * batch, head_cfg.in_channels,
                        generator=g)
    extra = classifier_logits(cfg, batch, head_cfg.num_classes, g)
    if extra:  # IGNORE: the head reads the image's view only
        feats = feats[:batch]

    def step():
        head.zero_grad(set_to_none=True)
        inputs = feats.detach().requires_grad_()
        losses = head.loss((inputs, ), samples, **extra)
        sum(losses.values()).backward()

    return step


def measure_iteration(batch: int, size: int, rounds: int,
                      progress: ProgressBar) -> Dict:
    models, data = iteration_models(batch, size)
    fns = {
        name: (lambda m=model, w=wrapper: m.train_step(data, w))
        for name, (model, wrapper) in models.items()
    }
    reference = list(fns)[1]
    iteration = interleaved(fns, reference, rounds, 0., progress)
    for name, fn in fns.items():
        iteration[name].update(profile_call(fn))
    # heads alone, on features of the iteration's batch size
    heads = {
        name: head_step(load(path), batch)
        for name, path in method_configs('coco').items()
    }
    mm_head = models[reference][0].head
    feats = torch.randn(batch, mm_head.fc.in_features)

    def mm_head_step():
        mm_head.zero_grad(set_to_none=True)
        inputs = feats.detach().requires_grad_()
        mm_head.loss((inputs, ), data['data_samples'])['loss'].backward()

    heads[reference] = mm_head_step
    head_times = interleaved(heads, reference, rounds * 4, 0.02, progress)
    spml_iter = iteration[list(fns)[0]]['time']
    for name, timed in head_times.items():
        timed['share'] = timed['time'] / (
            iteration[reference]['time'] if name == reference else spml_iter)
    return dict(iteration=iteration, heads=head_times, batch=batch,
                img_size=size, config=ITERATION_CONFIG)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=5,
                        help='interleaved rounds of the training iterations')
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--img-size', type=int, default=224)
    args = parse_speed_args(parser)
    results = measure_iteration(args.batch_size, args.img_size, args.rounds,
                                ProgressBar(args.rounds * 5))
    report_part(args.out_dir, 'iteration', results, sys.argv)


if __name__ == '__main__':
    main()
