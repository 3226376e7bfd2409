"""Multi-digit demo dataset built from scikit-learn's bundled 8x8 digits.

Each image is a grey canvas holding one to four distinct digits; its labels
are the digits present. Training and test images draw their glyphs from
disjoint pools of the 1,797 bundled digits, so the test set holds handwriting
the model never saw. The output is the community interchange format
(``formatted_{train,val}_{images,labels}.npy``), where ``val`` is the test
split of the protocol, plus a ``classes.txt``.
"""
import os
import os.path as osp
from typing import Sequence

import numpy as np
from mmengine.utils import ProgressBar
from PIL import Image

CLASSES = tuple(str(d) for d in range(10))


def _compose(glyphs: np.ndarray, canvas_size: int, glyph_size: int,
             noise: float, rng: np.random.RandomState) -> np.ndarray:
    """Place upscaled glyphs at random positions, max-blended, plus noise."""
    canvas = np.zeros((canvas_size, canvas_size), dtype=np.float32)
    for glyph in glyphs:
        big = Image.fromarray((glyph / 16. * 255).astype(np.uint8)).resize(
            (glyph_size, glyph_size), Image.BILINEAR)
        y, x = rng.randint(0, canvas_size - glyph_size + 1, size=2)
        region = canvas[y:y + glyph_size, x:x + glyph_size]
        np.maximum(region, np.asarray(big, np.float32) / 255., out=region)
    canvas += noise * rng.rand(canvas_size, canvas_size).astype(np.float32)
    return (np.clip(canvas, 0, 1) * 255).astype(np.uint8)


def _make_split(images: np.ndarray, targets: np.ndarray, num_images: int,
                prefix: str, out_dir: str, rng: np.random.RandomState,
                digits_per_image: Sequence[float], canvas_size: int,
                glyph_size: int, noise: float, progress: ProgressBar):
    by_digit = [np.nonzero(targets == d)[0] for d in range(10)]
    os.makedirs(osp.join(out_dir, 'images', prefix), exist_ok=True)
    paths, labels = [], np.zeros((num_images, 10), dtype=np.float64)
    for i in range(num_images):
        count = rng.choice(len(digits_per_image), p=digits_per_image) + 1
        digits = rng.choice(10, size=count, replace=False)
        glyphs = images[[rng.choice(by_digit[d]) for d in digits]]
        canvas = _compose(glyphs, canvas_size, glyph_size, noise, rng)
        path = osp.join('images', prefix, f'{prefix}_{i:05d}.png')
        Image.fromarray(canvas).save(osp.join(out_dir, path))
        paths.append(path)
        labels[i, digits] = 1
        progress.update()
    return np.array(paths), labels


def make_demo_dataset(out_dir: str,
                      num_train: int = 4000,
                      num_test: int = 2000,
                      train_pool: int = 1200,
                      digits_per_image: Sequence[float] = (0.35, 0.35, 0.2,
                                                           0.1),
                      canvas_size: int = 48,
                      glyph_size: int = 16,
                      noise: float = 0.2,
                      seed: int = 0) -> dict:
    """Write the demo dataset into ``out_dir``; deterministic in ``seed``.

    Args:
        out_dir (str): Output folder.
        num_train (int): Images of the official train split. Defaults to 4000.
        num_test (int): Images of the official val (= test) split.
            Defaults to 2000.
        train_pool (int): Bundled digits reserved for training images; the
            remaining 597 form the test pool. Defaults to 1200.
        digits_per_image (Sequence[float]): Probabilities of 1, 2, ... digits
            per image. Defaults to (0.35, 0.35, 0.2, 0.1).
        canvas_size (int): Side of the square image. Defaults to 48.
        glyph_size (int): Side of a placed digit. Defaults to 16.
        noise (float): Amplitude of uniform noise. Defaults to 0.2.
        seed (int): Seed of every random choice. Defaults to 0.

    Returns:
        dict: Per split, the number of images and average positives.
    """
    from sklearn.datasets import load_digits
    digits = load_digits()
    rng = np.random.RandomState(seed)
    order = rng.permutation(len(digits.target))
    pools = dict(train=order[:train_pool], val=order[train_pool:])
    sizes = dict(train=num_train, val=num_test)
    progress = ProgressBar(num_train + num_test)
    summary = {}
    for split in ('train', 'val'):
        pool = pools[split]
        paths, labels = _make_split(digits.images[pool], digits.target[pool],
                                    sizes[split], split, out_dir, rng,
                                    digits_per_image, canvas_size, glyph_size,
                                    noise, progress)
        np.save(osp.join(out_dir, f'formatted_{split}_images.npy'), paths)
        np.save(osp.join(out_dir, f'formatted_{split}_labels.npy'), labels)
        summary[split] = dict(
            images=len(paths), avg_positives=float(labels.sum(1).mean()))
    with open(osp.join(out_dir, 'classes.txt'), 'w') as f:
        f.write('\n'.join(CLASSES) + '\n')
    return summary
