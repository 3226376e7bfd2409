"""Forward + backward of every SPML loss against MMPretrain's BCE.

Every method's loss on (64 x 80), (64 x 312) and (256 x 600) logits, with the
hyperparameters of its ResNet-50 COCO and CUB configs (every
``configs/*/resnet50*_{coco,cub}.py``; COCO's at 600 classes), as a ratio to
MMPretrain's ``CrossEntropyLoss(use_sigmoid=True)``. The losses and the
reference run in interleaved rounds; the ratio is the median of the rounds'
ratios. Label-bank entries come from running the config's update rule on
random scores; LASD also gets its consistency term over its three views.
Peak memory and operator counts come from the profiler.

Writes ``speed_losses.json`` and re-renders ``speed.md`` in ``--out-dir``
(default ``work_dirs/results``; ``docs/results`` for the tracked page)
(``.dev_scripts/benchmark/speed.py`` runs this and the other measures at once).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.speed_losses --threads 1 --out-dir /tmp/speed
"""
import argparse
import copy
import sys
import time
from typing import Callable, Dict, Optional

import torch
from mmengine.config import Config
from mmengine.utils import ProgressBar
from mmpretrain.registry import MODELS

from spml_mm.models.data_preprocessors import split_views
from benchmark.measure import (clock, costliest_operator, interleaved,
                               profile_call)
from benchmark.pages.speed import (REFERENCE_NAME, parse_speed_args,
                                   report_part)
from benchmark.spml_setups import (REFERENCE, classifier_logits,
                                   head_config, load, method_configs,
                                   num_views, one_positive,
                                   start_schedules, trained_bank)

#: logits shapes of the loss table and the configs their settings come from
#: (256 x 600: the COCO settings at an OpenImages-like number of classes)
LOSS_SHAPES = {(64, 80): 'coco', (64, 312): 'cub', (256, 600): 'coco'}


def loss_step(cfg: Optional[Config], batch: int, num_classes: int,
              seed: int = 0) -> Callable[[], None]:
    """Forward + backward of a config's loss (None: the reference BCE)."""
    g = torch.Generator().manual_seed(seed)
    target = one_positive(batch, num_classes, g)
    if cfg is not None and cfg.model.head.num_classes != num_classes:
        cfg = copy.deepcopy(cfg)
        cfg.model.head.num_classes = num_classes
        if 'num_classes' in cfg.model.head.loss:
            cfg.model.head.loss.num_classes = num_classes
    views, kwargs, consistency = 1, {}, None
    if cfg is None:
        loss = MODELS.build(REFERENCE)
    else:
        head = head_config(cfg)
        loss = MODELS.build(head.loss)
        start_schedules(loss, cfg)
        kwargs = classifier_logits(cfg, batch, num_classes, g)
        if head.get('label_bank'):
            kwargs = trained_bank(cfg, target, g).entries(
                torch.arange(batch), target)
        if head.get('consistency'):
            consistency = MODELS.build(head.consistency)
            views = num_views(cfg)
    logits = torch.randn(views * batch, num_classes, generator=g) * 3

    def step():
        scores = logits.detach().requires_grad_()
        view_scores = split_views(scores, batch)
        value = loss(view_scores[0], target, **kwargs)
        if consistency is not None:
            value = value + consistency(view_scores)
        value.backward()

    return step


def measure_losses(rounds: int, progress: ProgressBar) -> Dict:
    """The loss table: the torch threads, the timer (``'thread'`` CPU time
    or ``'wall'``-clock) and per ``'BxC'`` shape, loss name -> time, ratio,
    peak memory, operators and the costliest operator."""
    shapes = {}
    for (batch, num_classes), dataset in LOSS_SHAPES.items():
        fns = {REFERENCE_NAME: loss_step(None, batch, num_classes)}
        for name, path in method_configs(dataset).items():
            fns[name] = loss_step(load(path), batch, num_classes)
        timed = interleaved(fns, REFERENCE_NAME, rounds, 0.02, progress)
        for name, fn in fns.items():
            timed[name].update(profile_call(fn),
                               costliest=costliest_operator(fn))
        shapes[f'{batch}x{num_classes}'] = timed
    return dict(threads=torch.get_num_threads(),
                timer='thread' if clock() is time.thread_time else 'wall',
                shapes=shapes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=30,
                        help='interleaved rounds of the timings')
    args = parse_speed_args(parser)
    progress = ProgressBar(len(LOSS_SHAPES) * args.rounds)
    results = measure_losses(args.rounds, progress)
    report_part(args.out_dir, 'losses', results, sys.argv)


if __name__ == '__main__':
    main()
