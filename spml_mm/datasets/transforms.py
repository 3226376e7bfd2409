from typing import Optional

import numpy as np
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS


@TRANSFORMS.register_module()
class SinglePositiveLabel(BaseTransform):
    """Keep one random positive of a fully labelled sample.

    Turns a sample of any MMPretrain multi-label dataset (``VOC``,
    ``MultiLabelDataset``, ...) into a single-positive one. The choice depends
    only on ``(seed, sample_idx)``, so it is the same in every epoch, worker
    and rank.

    **Required Keys:** ``gt_label`` (indices of the true positives),
    ``sample_idx``.

    **Modified Keys:** ``gt_label`` (one index).

    **Added Keys:** ``gt_label_full`` (the true positives, for diagnostics
    only).

    Args:
        seed (int): Seed of the choice. Defaults to 1200.
        num_classes (int, optional): When given, labels outside
            ``[0, num_classes)`` are an error. Defaults to None.

    Example:
        >>> train_pipeline = [
        ...     dict(type='LoadImageFromFile'),
        ...     dict(type='SinglePositiveLabel', seed=1200),
        ...     dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
        ... ]
    """

    def __init__(self, seed: int = 1200, num_classes: Optional[int] = None):
        self.seed = seed
        self.num_classes = num_classes

    def transform(self, results: dict) -> dict:
        labels = np.asarray(results['gt_label'], dtype=np.int64).reshape(-1)
        idx = results['sample_idx']
        where = results.get('img_path', f'sample {idx}')
        if len(labels) == 0:
            raise ValueError(f'SinglePositiveLabel: {where} (sample {idx}) has '
                             'no positive label; drop it from the dataset.')
        if self.num_classes is not None and (labels.min() < 0 or
                                             labels.max() >= self.num_classes):
            raise ValueError(
                f'SinglePositiveLabel: {where} (sample {idx}) has labels '
                f'{labels.tolist()} outside [0, {self.num_classes}); fix the '
                'annotation or num_classes.')
        rng = np.random.default_rng((self.seed, idx))
        results['gt_label_full'] = labels
        results['gt_label'] = labels[rng.integers(len(labels))][None]
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(seed={self.seed}, '
                f'num_classes={self.num_classes})')
