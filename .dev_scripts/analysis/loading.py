"""Load trained SPML models and their predictions for the analysis tools.

A *source* is what a user has after training or testing:

- a work dir of ``tools/train.py`` (the config MMEngine dumped there and its
  best checkpoint, else its latest one);
- a checkpoint ``.pth`` (its config from ``--config`` or, by default, the one
  MMEngine stored in the checkpoint's meta);
- a prediction dump ``.pkl`` of ``tools/test.py --out`` (test-set scores and
  true labels; no model needed).
"""
import copy
import glob
import os.path as osp
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from mmengine.config import Config
from mmengine.runner import Runner

from spml_mm.apis.model import build_model, load_model  # noqa: F401
from spml_mm.engine.hooks.pseudo_label_hook import scoring_pipeline
from spml_mm.utils import (find_best_checkpoint, find_last_checkpoint,
                           load_checkpoint_safely)


def resolve(source: str,
            config: Optional[str] = None) -> Tuple[Config, str]:
    """The config and checkpoint of a work dir (the best checkpoint that the
    run records, else its last one) or of a checkpoint file."""
    if osp.isdir(source):
        try:
            checkpoint = find_best_checkpoint(source)
        except FileNotFoundError:
            checkpoint = find_last_checkpoint(source)
        if checkpoint is None:
            raise FileNotFoundError(
                f'{source} holds no last_checkpoint of a training run; pass '
                'the checkpoint file')
        if config is None:
            dumped = glob.glob(osp.join(source, '*.py'))
            if len(dumped) != 1:
                raise FileNotFoundError(
                    f'{source} should hold the one config that tools/train.py'
                    f' dumps there, found {len(dumped)}; pass --config')
            config = dumped[0]
        return Config.fromfile(config), checkpoint
    if not osp.isfile(source):
        raise FileNotFoundError(f'{source} is neither a work dir nor a file')
    if config is not None:
        return Config.fromfile(config), source
    meta = load_checkpoint_safely(source, map_location='cpu').get('meta', {})
    if 'cfg' not in meta:
        raise ValueError(f'{source} stores no config in its meta; pass '
                         '--config')
    return Config.fromstring(meta['cfg'], file_format='.py'), source


def _loader(cfg: Config, split: str):
    if split == 'test':
        loader = copy.deepcopy(cfg.test_dataloader)
    elif split == 'train':
        # the training images with the test-time pipeline, keeping the
        # observed labels (gt_label) and the true ones (gt_label_full)
        eval_loader = cfg.get('val_dataloader') or cfg.test_dataloader
        loader = copy.deepcopy(eval_loader)
        loader.dataset = copy.deepcopy(cfg.train_dataloader.dataset)
        loader.dataset.pipeline = scoring_pipeline(
            eval_loader.dataset.pipeline,
            cfg.train_dataloader.dataset.get('pipeline', []))
        loader.sampler = dict(type='DefaultSampler', shuffle=False)
    else:
        raise ValueError(f'split must be "train" or "test", got {split!r}')
    loader.pop('batch_sampler', None)
    if not loader.get('num_workers'):
        loader.persistent_workers = False
    return Runner.build_dataloader(loader)


def _matrix(labels, num_classes: int) -> np.ndarray:
    row = np.zeros(num_classes, dtype=np.uint8)
    row[np.asarray(labels, dtype=np.int64)] = 1
    return row


@torch.no_grad()
def score_split(model: torch.nn.Module, cfg: Config,
                split: str) -> Dict[str, np.ndarray]:
    """Scores of a split and its labels, in dataset order.

    Returns:
        dict: ``scores`` (N, C) probabilities and ``labels`` (N, C) true 0/1
        labels; for the training split also ``observed`` (N, C), the
        observed labels the model trained with. ``classes`` holds the class
        names.
    """
    loader = _loader(cfg, split)
    num_classes = cfg.model.head.num_classes
    scores, labels, observed, index = [], [], [], []
    for data in loader:
        for sample in model.test_step(data):
            scores.append(sample.pred_score.float().cpu().numpy())
            index.append(sample.sample_idx)
            given = _matrix(sample.gt_label, num_classes)
            if split == 'train':
                observed.append(given)
                labels.append(_matrix(sample.gt_label_full, num_classes))
            else:
                labels.append(given)
    order = np.argsort(index)
    out = dict(
        scores=np.stack(scores)[order],
        labels=np.stack(labels)[order],
        classes=np.array(loader.dataset.metainfo['classes']))
    if observed:
        out['observed'] = np.stack(observed)[order]
    return out


def load_predictions(path: str) -> Dict[str, np.ndarray]:
    """Test-set scores and true labels from ``tools/test.py --out`` dumps.

    The dump is a pickle: load only your own files.
    """
    import mmengine
    samples = mmengine.load(path)
    num_classes = len(samples[0]['pred_score'])
    return dict(
        scores=np.stack(
            [np.asarray(s['pred_score'], dtype=np.float64) for s in samples]),
        labels=np.stack(
            [_matrix(s['gt_label'], num_classes) for s in samples]),
        classes=np.array([str(k) for k in range(num_classes)]))


def predictions(source: str, split: str = 'test',
                config: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Scores and labels of a split from any source (see the module doc)."""
    if source.endswith('.pkl'):
        if split != 'test':
            raise ValueError(f'{source} is a test-set dump; the {split} split'
                             ' needs a checkpoint or a work dir')
        return load_predictions(source)
    cfg, checkpoint = resolve(source, config)
    return score_split(load_model(cfg, checkpoint), cfg, split)
