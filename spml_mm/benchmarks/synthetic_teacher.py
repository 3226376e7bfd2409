"""A teacher of known quality: scores made from a dataset's true labels
with controlled noise, for tests and
``.dev_scripts/benchmark/teacher_quality.py``.

For image i and class c with true label ``y`` in {0, 1}, the teacher's
logit is ``x = (1 - noise) y + noise e`` with ``e`` standard normal, and its
scores are the softmax over classes of ``x / temperature``, the shape of a
vision-language teacher's (CLIP's similarities, softmax over the class
prompts). ``noise = 0`` ranks every true label first; ``noise = 1`` is
noise alone, whose mAP is the class prior. Crop scores (DAMP) see each true
class of the image in a random half of the crops, with noise of their own.
"""
from typing import Optional, Tuple

import numpy as np

from spml_mm.datasets.teacher_scores import (dataset_classes,
                                              dataset_image_paths,
                                              image_fingerprints,
                                              save_teacher_scores)

#: softmax temperature of the synthetic teacher's logits
TEMPERATURE = 0.25


def full_label_matrix(dataset) -> np.ndarray:
    """The true labels (N, C), boolean, of a training dataset whose data
    infos carry ``gt_label_full`` (:class:`SPMLDataset`'s training split),
    in ``sample_idx`` order."""
    classes = len(dataset_classes(dataset))
    labels = np.zeros((len(dataset), classes), dtype=bool)
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        if 'gt_label_full' not in info:
            raise ValueError(
                f'{type(dataset).__name__} sample {i} has no gt_label_full; '
                'a synthetic teacher needs the true labels of the training '
                'split')
        labels[i, np.asarray(info['gt_label_full'], dtype=np.int64)] = True
    return labels


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x / TEMPERATURE
    x = np.exp(x - x.max(-1, keepdims=True))
    return x / x.sum(-1, keepdims=True)


def synthetic_teacher_scores(labels: np.ndarray,
                             noise: float,
                             seed: int = 0,
                             num_crops: int = 0
                             ) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Scores (N, C) and, with ``num_crops``, crop scores (N, K, C) of a
    teacher of noise level ``noise`` in [0, 1] (module docstring).

    Args:
        labels (np.ndarray): True labels (N, C), boolean.
        noise (float): 0 (perfect) to 1 (noise only).
        seed (int): Seed of the noise. Defaults to 0.
        num_crops (int): K, the crops scored per image. Defaults to 0.
    """
    if not 0 <= noise <= 1:
        raise ValueError(f'noise must be in [0, 1], got {noise!r}')
    rng = np.random.default_rng(seed)
    y = labels.astype(np.float64)
    scores = _softmax((1 - noise) * y + noise * rng.standard_normal(y.shape))
    crops = None
    if num_crops:
        shape = (len(y), num_crops, y.shape[1])
        seen = y[:, None, :] * (rng.random(shape) < 0.5)
        crops = _softmax((1 - noise) * seen +
                         noise * rng.standard_normal(shape))
    return scores.astype(np.float32), (None if crops is None else
                                       crops.astype(np.float32))


def write_synthetic_teacher(dataset,
                            path: str,
                            noise: float,
                            seed: int = 0,
                            num_crops: int = 0) -> np.ndarray:
    """Write the synthetic teacher's score file of ``dataset`` (its
    training split) to ``path``; return its scores (N, C)."""
    labels = full_label_matrix(dataset)
    scores, crops = synthetic_teacher_scores(labels, noise, seed, num_crops)
    img_paths = dataset_image_paths(dataset)
    save_teacher_scores(
        path,
        scores,
        img_paths,
        dataset_classes(dataset),
        dict(
            source='synthetic',
            noise=noise,
            seed=seed,
            temperature=TEMPERATURE,
            crops=num_crops),
        crop_scores=crops,
        img_fingerprints=image_fingerprints(img_paths, dataset.data_root))
    return scores
