from typing import List, Sequence

import numpy as np
import torch
from mmpretrain.registry import METRICS

from .metrics import KnownLabelMetric


@METRICS.register_module()
class SPMLReaLAccuracy(KnownLabelMetric):
    """Top-1 accuracy against label sets, in percent: ReaL's accuracy
    (Beyer et al. 2020), where the top-scoring class is correct when it is
    any of the image's labels.

    Reads each sample's ``pred_score`` and its labels as
    :class:`SPMLAveragePrecision` does. Reports ``spml/top1_real`` over the
    fully labelled samples (on ImageNet's ``SPMLImageNet`` test split: the
    ReaL label sets, empty sets already left out) and, on samples whose
    labels are partly unknown (single labels validated as observed),
    ``spml/top1_observed``: the share whose top class is a known positive
    (ImageNet's usual top-1 accuracy on single labels).

    Args:
        collect_device (str): Device of the results' collection across
            ranks. Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'spml'``.

    Example:
        >>> test_evaluator = [dict(type='SPMLAveragePrecision'),
        ...                   dict(type='SPMLReaLAccuracy')]
    """

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            score = torch.as_tensor(sample['pred_score'])
            known = self.known_labels(sample, len(score))
            top = int(score.argmax())
            self.results.append((bool(known[top] == 1),
                                 bool((known != 0).all())))

    def compute_metrics(self, results: List) -> dict:
        correct = np.array([r[0] for r in results], dtype=bool)
        full = np.array([r[1] for r in results], dtype=bool)
        metrics = {}
        if full.any():
            metrics['top1_real'] = float(100 * correct[full].mean())
        if (~full).any():
            metrics['top1_observed'] = float(100 * correct[~full].mean())
        return metrics
