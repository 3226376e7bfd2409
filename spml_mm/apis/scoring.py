"""A model's scores on a split of its config, with the split's labels."""
import copy
from typing import Dict

import numpy as np
import torch
from mmengine.config import Config
from mmengine.runner import Runner
from mmengine.utils import ProgressBar

from spml_mm.evaluation import SPMLAveragePrecision


def split_loader(cfg: Config, split: str, **dataset_options):
    """The data loader of the ``val`` or ``test`` split of ``cfg``, in
    dataset order, its dataset updated with ``dataset_options`` (e.g.
    ``val_labels='observed'``)."""
    if split not in ('val', 'test'):
        raise ValueError(f'split must be "val" or "test", got {split!r}')
    loader = copy.deepcopy(cfg[f'{split}_dataloader'])
    loader.dataset.update(dataset_options)
    loader.sampler = dict(type='DefaultSampler', shuffle=False)
    loader.pop('batch_sampler', None)
    if not loader.get('num_workers'):
        loader.persistent_workers = False
    return Runner.build_dataloader(loader)


@torch.no_grad()
def score_split(model: torch.nn.Module, cfg: Config, split: str,
                **dataset_options) -> Dict[str, np.ndarray]:
    """The model's scores on a split and the split's labels, in dataset
    order, with a progress bar.

    Returns:
        dict: ``scores`` (N, C) raw sigmoid scores (before any calibrated
        thresholds of the head), ``known`` (N, C) int8 labels (+1 known
        positive, -1 known negative, 0 unknown: see
        :class:`~spml_mm.evaluation.SPMLAveragePrecision`) and ``classes``.
    """
    loader = split_loader(cfg, split, **dataset_options)
    scores, known, index = [], [], []
    progress = ProgressBar(len(loader.dataset))
    for data in loader:
        samples = model.test_step(data)
        for sample in samples:
            score = sample.pred_score
            scores.append(score.float().cpu().numpy())
            known.append(
                SPMLAveragePrecision.known_labels(sample.to_dict(),
                                                  len(score)))
            index.append(sample.sample_idx)
        progress.update(len(samples))
    order = np.argsort(index)
    return dict(scores=np.stack(scores)[order],
                known=np.stack(known)[order],
                classes=list(loader.dataset.metainfo['classes']))
