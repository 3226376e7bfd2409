from typing import List, Optional, Sequence

import numpy as np
import torch
from mmengine.evaluator import BaseMetric
from mmpretrain.registry import METRICS
from sklearn.metrics import average_precision_score


def average_precision_per_class(scores: np.ndarray,
                                labels: np.ndarray) -> np.ndarray:
    """Average precision of each class, in percent.

    AP follows scikit-learn's ``average_precision_score``; a class without a
    positive in ``labels`` counts as 0.

    Args:
        scores (np.ndarray): Predicted scores, shape (N, C).
        labels (np.ndarray): True 0/1 labels, shape (N, C).

    Returns:
        np.ndarray: AP per class (C,), in percent.
    """
    scores, labels = np.asarray(scores), np.asarray(labels)
    if scores.shape != labels.shape or scores.ndim != 2:
        raise ValueError(f'scores and labels must both be (N, C), got '
                         f'{scores.shape} and {labels.shape}')
    ap = np.zeros(labels.shape[1])
    for k in np.flatnonzero(labels.sum(0) > 0):
        ap[k] = average_precision_score(labels[:, k], scores[:, k])
    return 100 * ap


def mean_average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """mAP in percent: the mean of :func:`average_precision_per_class`."""
    return float(average_precision_per_class(scores, labels).mean())


@METRICS.register_module()
class SPMLAveragePrecision(BaseMetric):
    """Mean average precision of SPML evaluation, in percent.

    Defined in docs/methods.md, "The protocol".

    Reads ``pred_score`` and the true labels ``gt_label`` of every sample;
    reports ``spml/mAP`` and, optionally, ``spml/AP_<class>``.

    Args:
        per_class (bool): Also report each class's AP. Defaults to False.
        collect_device (str): Device for gathering results across ranks.
            Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'spml'``.

    Example:
        >>> val_evaluator = dict(type='SPMLAveragePrecision')
        >>> default_hooks = dict(checkpoint=dict(
        ...     type='CheckpointHook', save_best='spml/mAP', rule='greater'))
    """

    default_prefix: Optional[str] = 'spml'

    def __init__(self,
                 per_class: bool = False,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.per_class = per_class

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            score = sample['pred_score'].float().cpu()
            label = torch.zeros_like(score, dtype=torch.uint8)
            label[sample['gt_label'].cpu()] = 1
            self.results.append((score.numpy(), label.numpy()))

    def compute_metrics(self, results: List) -> dict:
        scores = np.stack([r[0] for r in results])
        labels = np.stack([r[1] for r in results])
        ap = average_precision_per_class(scores, labels)
        metrics = dict(mAP=float(ap.mean()))
        if self.per_class:
            classes = (self.dataset_meta or {}).get(
                'classes', [str(k) for k in range(len(ap))])
            metrics.update({f'AP_{c}': float(v) for c, v in zip(classes, ap)})
        return metrics
