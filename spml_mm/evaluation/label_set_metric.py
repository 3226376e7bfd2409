from typing import List, Sequence

import numpy as np
import torch
from mmpretrain.evaluation import MultiLabelMetric
from mmpretrain.registry import METRICS

from .metrics import KnownLabelMetric


def harmonic_mean(precision: float, recall: float) -> float:
    """2 P R / (P + R), 0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + \
        recall > 0 else 0.


@METRICS.register_module()
class SPMLLabelSetMetric(KnownLabelMetric):
    """Precision, recall and F1 of the predicted label sets, in percent.

    Reads each sample's ``pred_label``, the label set the head predicts at
    its thresholds (``thr``, ``topk`` or the calibrated per-class
    ``thresholds`` of :class:`~spml_mm.models.SPMLLinearClsHead`), and its
    labels as :class:`SPMLAveragePrecision` does. The counts are
    MMPretrain's (``MultiLabelMetric.calculate``). Reports, on the fully
    labelled samples:

    - ``spml/CP``, ``spml/CR``: per-class precision and recall, averaged
      over the classes; ``spml/CF1`` = 2 CP CR / (CP + CR), as the
      multi-label literature reports it (MMPretrain's own ``f1-score`` is
      the mean of the per-class F1 instead);
    - ``spml/OP``, ``spml/OR``, ``spml/OF1``: the same over all entries.

    On samples whose labels are partly unknown (``val_labels='observed'``),
    where precision cannot be counted, ``spml/recall_observed``: the share
    of the known positives that are predicted (what conformal thresholds
    control).

    Args:
        per_class (bool): Also report each class's precision and recall on
            the fully labelled samples, as ``spml/P_<class>`` and
            ``spml/R_<class>``. Defaults to False.
        collect_device (str): Device of the results' collection across
            ranks. Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'spml'``.

    Example:
        >>> test_evaluator = [dict(type='SPMLAveragePrecision'),
        ...                   dict(type='SPMLLabelSetMetric')]
    """

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            num_classes = len(sample['pred_score'])
            predicted = np.zeros(num_classes, dtype=bool)
            predicted[torch.as_tensor(sample['pred_label']).cpu().numpy()] = 1
            self.results.append(
                (predicted, self.known_labels(sample, num_classes)))

    def compute_metrics(self, results: List) -> dict:
        predicted = np.stack([r[0] for r in results])
        known = np.stack([r[1] for r in results])
        full = (known != 0).all(1)
        metrics = {}
        if full.any():
            pred, target = predicted[full], (known[full] == 1).astype(int)
            for average, name in (('macro', 'C'), ('micro', 'O')):
                precision, recall, _, _ = MultiLabelMetric.calculate(
                    pred.astype(float), target, average=average, thr=0.5)
                precision, recall = float(precision), float(recall)
                metrics.update({
                    f'{name}P': precision,
                    f'{name}R': recall,
                    f'{name}F1': harmonic_mean(precision, recall)
                })
            if self.per_class:
                classes = self.class_names(known.shape[1])
                precision, recall, _, _ = MultiLabelMetric.calculate(
                    pred.astype(float), target, average=None, thr=0.5)
                for c, p, r in zip(classes, precision, recall):
                    metrics[f'P_{c}'] = float(p)
                    metrics[f'R_{c}'] = float(r)
        positive = known[~full] == 1
        if positive.any():
            metrics['recall_observed'] = float(
                100 * (predicted[~full] & positive).sum() / positive.sum())
        return metrics
