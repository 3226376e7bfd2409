"""The teacher's pass over a dataset: batched, on whole images and DAMP's
crops, resumable, and its cache identity.

``tools/score_teacher.py`` is the command; :func:`score_images` the pass.
Every ``save_every`` images the scores so far are written to
``<out>.partial.npz`` with the identity of the run (:func:`run_identity`);
a run that finds a partial file of the same identity starts where it
stopped, one of another identity is refused.
"""
import hashlib
import json
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from mmcv.transforms import LoadImageFromFile
from mmengine.utils import ProgressBar

from spml_mm.datasets.feature_cache import load_feature_cache
from .scorer import TeacherScorer, whole_and_crops

#: The meta keys that say which scores a file holds: a cached file whose
#: keys differ from a new run's was made for something else.
IDENTITY_KEYS = ('source', 'num_images', 'images_sha256',
                 'images_fingerprint', 'classes', 'teacher_config_sha256',
                 'checkpoint_sha256', 'scores_file_sha256',
                 'feature_cache_sha256', 'prompts', 'temperature',
                 'crop_grid', 'image_size', 'interpolation')


def paths_sha256(img_paths: Sequence[str]) -> str:
    """sha256 of the image list (order included)."""
    return hashlib.sha256('\n'.join(img_paths).encode()).hexdigest()


def _class_difference(old: List[str], new: List[str]) -> str:
    if sorted(old) == sorted(new):
        moved = [f'{k}: {a!r} -> {b!r}'
                 for k, (a, b) in enumerate(zip(old, new)) if a != b]
        return f'the same classes in another order ({"; ".join(moved[:5])})'
    return (f'{len(old)} -> {len(new)} classes, only before: '
            f'{[c for c in old if c not in new][:10]}, only now: '
            f'{[c for c in new if c not in old][:10]}')


def identity_differences(old: dict, new: dict) -> List[str]:
    """``key: old -> new`` for every identity key that differs."""
    diffs = []
    for key in IDENTITY_KEYS:
        if old.get(key) != new.get(key):
            a, b = old.get(key), new.get(key)
            if key == 'classes' and a and b:
                diffs.append(f'classes: {_class_difference(a, b)}')
            elif key == 'images_fingerprint' and a and b:
                diffs.append('images_fingerprint: other image files at the '
                             'same paths')
            else:
                diffs.append(f'{key}: {a!r} -> {b!r}')
    return diffs


def run_identity(meta: dict) -> dict:
    """The identity keys of ``meta`` (JSON round-tripped, so that tuples
    and lists compare equal)."""
    return json.loads(
        json.dumps({k: meta[k] for k in IDENTITY_KEYS if k in meta}))


def _write_npz(path: str, **arrays) -> None:
    tmp = f'{path}.{os.getpid()}.tmp'
    with open(tmp, 'wb') as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def _read_partial(path: str, identity: dict, num_classes: int,
                  num_views: int) -> Tuple[np.ndarray, np.ndarray]:
    """The scores (done, C) and crop scores (done, K, C) of a partial run,
    or empty arrays; refuses a partial file of another run."""
    empty = (np.zeros((0, num_classes), np.float32),
             np.zeros((0, num_views - 1, num_classes), np.float32))
    if not osp.isfile(path):
        return empty
    with np.load(path, allow_pickle=False) as data:
        old = json.loads(str(data['identity']))
        scores, crops = data['scores'], data['crop_scores']
    diffs = identity_differences(old, identity)
    if diffs:
        raise ValueError(
            f'{path} holds the partial scores of another run ('
            f'{"; ".join(diffs)}); delete it to start this run afresh.')
    return scores, crops


def score_images(teacher: TeacherScorer,
                 img_paths: Sequence[str],
                 data_root: str,
                 identity: dict,
                 batch_size: int = 32,
                 grid: int = 0,
                 interpolation: str = 'bilinear',
                 partial_path: Optional[str] = None,
                 save_every: int = 1000,
                 feature_cache: Optional[str] = None
                 ) -> Tuple[np.ndarray, Optional[np.ndarray], Dict]:
    """Score every image, and its ``grid x grid`` crops, with ``teacher``.

    Args:
        teacher (TeacherScorer): The teacher.
        img_paths (Sequence[str]): Paths relative to ``data_root``.
        data_root (str): Folder the paths are relative to.
        identity (dict): What the scores depend on, kept with the partial
            results so that a resumed run is the same run.
        batch_size (int): Images per forward pass (each brings its crops).
        grid (int): Crops per side (AEVLP: 4; CUB 5); 0 scores whole images
            only.
        interpolation (str): Resize interpolation of the images and crops.
        partial_path (str, optional): Where the scores so far are saved and
            resumed from; None disables resuming.
        save_every (int): Images between two saves of the partial results
            (an interrupted or failing run saves them too).
        feature_cache (str, optional): Feed the teacher each image's cached
            features (``tools/cache_features.py``, keyed by the dataset's
            ``img_path``) instead of the image: a teacher trained in the
            linear regime (``PrecomputedFeatures``). Whole images only.

    Returns:
        tuple: scores (N, C), crop scores (N, grid**2, C) or None, and
        ``dict(resumed_from=...)``.
    """
    num_classes, views = len(teacher.classes), 1 + grid * grid
    scores, crops = _read_partial(partial_path or '', identity, num_classes,
                                  views)
    done = start = len(scores)
    if start:
        print(f'resuming from {partial_path}: {start} of {len(img_paths)} '
              'images scored')
    chunks, crop_chunks = [scores], [crops]
    loader = LoadImageFromFile()
    if feature_cache:
        if grid:
            raise ValueError('a teacher of cached features scores whole '
                             'images only; leave out --crops')
        rows, features, _ = load_feature_cache(feature_cache)

    def views_of(path: str) -> np.ndarray:
        """(views, H, W, channels) of one image."""
        path = osp.join(data_root, path)
        if not feature_cache:
            return whole_and_crops(loader(dict(img_path=path))['img'],
                                   teacher.image_size, grid, interpolation)
        row = rows.get(osp.normpath(path))
        if row is None:
            raise ValueError(
                f'{path} is not in the feature cache {feature_cache}; write '
                'the cache of this dataset with tools/cache_features.py')
        return features[row].astype(np.float32)[None, None, None]

    progress = ProgressBar(len(img_paths), start=True)
    progress.completed = done
    last_save = done

    def save() -> None:
        if partial_path and last_save < done < len(img_paths):
            _write_npz(partial_path,
                       scores=np.concatenate(chunks),
                       crop_scores=np.concatenate(crop_chunks),
                       identity=np.array(json.dumps(identity)))

    try:
        while done < len(img_paths):
            batch = img_paths[done:done + batch_size]
            images = [views_of(path) for path in batch]
            inputs = torch.from_numpy(np.stack(images)).flatten(0, 1)
            out = teacher.score(inputs.permute(0, 3, 1, 2).float())
            out = out.view(len(batch), views, num_classes).cpu().numpy()
            chunks.append(out[:, 0].astype(np.float32))
            crop_chunks.append(out[:, 1:].astype(np.float32))
            done += len(batch)
            progress.update(len(batch))
            if done - last_save >= save_every:
                save()
                last_save = done
    except BaseException:
        save()  # an interrupted run keeps what it scored
        raise
    print()
    scores = np.concatenate(chunks)
    crops = np.concatenate(crop_chunks) if grid else None
    return scores, crops, dict(resumed_from=start)
