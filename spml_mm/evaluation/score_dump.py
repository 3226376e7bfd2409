import os
import os.path as osp
from typing import Sequence

import numpy as np
from mmengine.evaluator import BaseMetric
from mmpretrain.registry import METRICS

from .metrics import SPMLAveragePrecision


@METRICS.register_module()
class SPMLScoreDump(BaseMetric):
    """Write the raw scores of an evaluation and its labels to an ``.npz``.

    Unlike MMEngine's ``DumpResults`` (a pickle, which only a trusted file
    may be loaded from), the file holds plain arrays, in dataset order:
    ``scores`` (N, C, float32 raw sigmoid scores, the head's ``pred_score``;
    float16 would tie close scores and change
    the AP), ``known`` (N, C, int8: +1 known positive,
    -1 known negative, 0 unknown, as :class:`SPMLAveragePrecision` reads
    them), ``sample_idx`` and ``classes``. Later analyses (per-class AP,
    thresholds, F1) then run without the model. Reports no metric.

    Args:
        out_file (str): The ``.npz`` file.
        collect_device (str): Device of the collection across ranks.
            Defaults to ``'cpu'``.
    """

    def __init__(self, out_file: str, collect_device: str = 'cpu'):
        if not out_file.endswith('.npz'):
            raise ValueError(f'out_file must end with .npz, got {out_file}')
        super().__init__(collect_device=collect_device)
        self.out_file = out_file

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            score = sample['pred_score']
            score = score.float().cpu().numpy()
            self.results.append(
                (sample['sample_idx'], score,
                 SPMLAveragePrecision.known_labels(sample, len(score))))

    def compute_metrics(self, results: list) -> dict:
        order = np.argsort([r[0] for r in results])
        classes = (self.dataset_meta or {}).get(
            'classes', [str(k) for k in range(len(results[0][1]))])
        os.makedirs(osp.dirname(osp.abspath(self.out_file)), exist_ok=True)
        tmp = self.out_file[:-len('.npz')] + '.tmp.npz'
        np.savez_compressed(
            tmp,
            scores=np.stack([r[1] for r in results])[order],
            known=np.stack([r[2] for r in results])[order],
            sample_idx=np.array([r[0] for r in results])[order],
            classes=np.array(classes))
        os.replace(tmp, self.out_file)
        return {}
