"""Precomputed backbone features in place of images (the linear regime).

A feature cache is one ``.npz`` file written by ``tools/cache_features.py``:

- ``images``: the ``img_path`` of every image, as the dataset of the config
  that wrote it gives them (str, N);
- ``features``: the backbone + neck output of each image (float16, N x D);
- ``features_flipped``: the same for the horizontally flipped image.

With a frozen backbone, training only the classifier on cached features is
the same computation as on images, at the cost of one pass over the data.
"""
import os.path as osp
from typing import Dict, Tuple

import numpy as np
import torch
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS

_CACHES: Dict[str, Tuple[Dict[str, int], np.ndarray, np.ndarray]] = {}


def load_feature_cache(
        cache_file: str) -> Tuple[Dict[str, int], np.ndarray, np.ndarray]:
    """``(row of each image path, features, flipped features)``, read once
    per process."""
    key = osp.abspath(cache_file)
    if key not in _CACHES:
        if not osp.isfile(cache_file):
            raise FileNotFoundError(
                f'feature cache {cache_file} not found; write it with '
                'python tools/cache_features.py IMAGE_CONFIG --out '
                f'{cache_file}')
        with np.load(cache_file) as data:
            rows = {osp.normpath(str(p)): i
                    for i, p in enumerate(data['images'])}
            _CACHES[key] = (rows, data['features'],
                            data['features_flipped'])
    return _CACHES[key]


@TRANSFORMS.register_module()
class LoadCachedFeatures(BaseTransform):
    """Load an image's cached features instead of the image.

    The features become ``img``, a float32 tensor (D, 1, 1) that
    ``PackInputs`` and ``ClsDataPreprocessor`` pass through as a 1 x 1 image
    with D channels; the model's backbone is ``PrecomputedFeatures``.

    **Required Keys:** ``img_path``.

    **Added Keys:** ``img``, ``flip`` (whether the flipped image's features
    were taken).

    Args:
        cache_file (str): The ``.npz`` of ``tools/cache_features.py``.
        flip_prob (float): Chance of taking the horizontally flipped image's
            features: the cached counterpart of ``RandomFlip(prob)``.
            Defaults to 0.

    Example:
        >>> train_pipeline = [
        ...     dict(type='LoadCachedFeatures',
        ...          cache_file='data/proxy-voc/features/lite0_128px.npz',
        ...          flip_prob=0.5),
        ...     dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
        ... ]
    """

    def __init__(self, cache_file: str, flip_prob: float = 0.):
        if not 0 <= flip_prob <= 1:
            raise ValueError(f'flip_prob must be in [0, 1], got {flip_prob}')
        self.cache_file = cache_file
        self.flip_prob = flip_prob

    def transform(self, results: dict) -> dict:
        rows, features, flipped = load_feature_cache(self.cache_file)
        row = rows.get(osp.normpath(results['img_path']))
        if row is None:
            raise KeyError(
                f'{results["img_path"]} is not in the feature cache '
                f'{self.cache_file}; write the cache again with '
                'tools/cache_features.py for this dataset')
        flip = bool(self.flip_prob and np.random.rand() < self.flip_prob)
        vector = (flipped if flip else features)[row]
        results['img'] = torch.from_numpy(vector.astype(np.float32))[:, None,
                                                                      None]
        results['flip'] = flip
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(cache_file={self.cache_file!r}, '
                f'flip_prob={self.flip_prob})')
