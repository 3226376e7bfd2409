"""Decoded images in place of image files: the fast data path of a small
dataset.

An image cache is written once by ``tools/cache_images.py`` from a config:
every image of its train, val and test loaders decoded (and resized, where
the pipeline resizes before anything random) exactly as the pipeline's
leading ``LoadImageFromFile`` and ``Resize`` steps do, into

- ``<name>.npy``: the images, uint8, N x H x W x C (BGR, as
  ``LoadImageFromFile`` gives them), read memory-mapped;
- ``<name>.json``: what each row holds: the image path, its file's size and
  modification time (a changed file makes the cache stale), the result keys
  the cached steps set (``img_shape``, ``ori_shape``, ``scale_factor``, ...)
  and the steps themselves.

``LoadCachedImage`` then replaces those steps in the pipeline: the results it
gives are those of the steps it replaces, so the batches are the same
(random steps after it draw the same random numbers), while a batch costs a
copy from memory instead of decoding files.
"""
import hashlib
import json
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from mmcv.transforms import BaseTransform
from mmpretrain.registry import TRANSFORMS

#: the pipeline steps a cache can hold: deterministic, before any random one
CACHEABLE = ('LoadImageFromFile', 'Resize')
LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')

_CACHES: Dict[str, Tuple[np.ndarray, dict, Dict[str, int]]] = {}


def cached_steps(pipeline: Sequence[dict]) -> List[dict]:
    """The leading steps of ``pipeline`` a cache holds: ``LoadImageFromFile``
    and the ``Resize`` steps right after it."""
    steps = [dict(step) for step in pipeline]
    if not steps or steps[0].get('type') != 'LoadImageFromFile':
        raise ValueError('an image cache replaces the pipeline\'s first step '
                         'LoadImageFromFile; this pipeline starts with '
                         f'{steps[0].get("type") if steps else "nothing"}')
    count = 1
    while count < len(steps) and steps[count].get('type') in CACHEABLE[1:]:
        count += 1
    return steps[:count]


def config_image_paths(cfg) -> List[str]:
    """``img_path`` of every sample of a config's train, val and test
    loaders, each once, in loader order."""
    from mmpretrain.registry import DATASETS
    seen, paths = set(), []
    for loader in LOADERS:
        dataset_cfg = dict(cfg[loader]['dataset'])
        dataset_cfg['pipeline'] = []
        dataset = DATASETS.build(dataset_cfg)
        for i in range(len(dataset)):
            path = dataset.get_data_info(i)['img_path']
            if path not in seen:
                seen.add(path)
                paths.append(path)
    return paths


def default_cache_file(paths: Sequence[str], steps: Sequence[dict],
                       data_root: str) -> str:
    """``<data_root>/image_cache/<key>.npy``, the key a hash of the image
    list and the cached steps: another list or size gets another file."""
    key = hashlib.sha1(json.dumps([list(paths), list(steps)],
                                  sort_keys=True).encode()).hexdigest()[:12]
    return osp.join(data_root, 'image_cache', f'{key}.npy')


def cache_options(cache_file: str) -> List[str]:
    """``--cfg-options`` that make a config's loaders read ``cache_file``
    instead of decoding files, for pipelines whose cached step is their
    first step alone (``LoadImageFromFile``, e.g. the proxy configs)."""
    return [f'{loader}.dataset.pipeline.0.{key}={value}'
            for loader in LOADERS
            for key, value in (('type', 'LoadCachedImage'),
                               ('cache_file', cache_file))]


def with_image_cache(cfg, cache_file: str) -> None:
    """Make every loader of ``cfg`` (a ``Config``, changed in place) read
    ``cache_file``: the leading steps the cache holds
    (:func:`cached_steps`) replaced by ``LoadCachedImage``, which refuses
    a cache of other steps when the first image loads."""
    for loader in LOADERS:
        if not cfg.get(loader):
            continue
        dataset = cfg[loader]['dataset']
        if 'pipeline' not in dataset:
            raise ValueError(f'an image cache replaces the first steps of '
                             f'{loader}.dataset.pipeline; {loader}.dataset '
                             f'({dataset.get("type")}) has no pipeline')
        steps = cached_steps(dataset['pipeline'])
        dataset['pipeline'] = [
            dict(type='LoadCachedImage', cache_file=cache_file, steps=steps)
        ] + list(dataset['pipeline'][len(steps):])


def file_stamp(path: str) -> List[int]:
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns]


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return ['__array__', value.tolist(), str(value.dtype)]
    if isinstance(value, tuple):
        return ['__tuple__', [_jsonable(v) for v in value]]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


def _restored(value):
    if isinstance(value, list) and value and value[0] == '__tuple__':
        return tuple(_restored(v) for v in value[1])
    if isinstance(value, list) and value and value[0] == '__array__':
        return np.array(value[1], dtype=value[2])
    return value


def build_image_cache(paths: Sequence[str], steps: Sequence[dict],
                      cache_file: str, progress: bool = True) -> str:
    """Run ``steps`` (:func:`cached_steps`) on every image and write the
    cache; the images must come out in one shape. Written to temporary
    files and renamed, the json last: an interrupted build leaves no
    cache."""
    from mmcv.transforms import Compose
    from mmengine.utils import ProgressBar
    pipeline = Compose([dict(step) for step in steps])
    first = pipeline(dict(img_path=paths[0]))
    shape = first['img'].shape
    os.makedirs(osp.dirname(osp.abspath(cache_file)), exist_ok=True)
    stem = osp.splitext(cache_file)[0]
    tmp = stem + '.partial.npy'
    images = np.lib.format.open_memmap(
        tmp, mode='w+', dtype=first['img'].dtype,
        shape=(len(paths), ) + shape)
    rows = []
    bar = ProgressBar(len(paths)) if progress else None
    for i, path in enumerate(paths):
        results = first if i == 0 else pipeline(dict(img_path=path))
        if results['img'].shape != shape:
            raise ValueError(
                f'{path} is {results["img"].shape} after {len(steps)} cached '
                f'step(s), the first image {paths[0]} {shape}: a cache holds '
                'one image shape; add a Resize after LoadImageFromFile')
        images[i] = results['img']
        rows.append(dict(
            img_path=path, stamp=file_stamp(path),
            results={k: _jsonable(v) for k, v in results.items()
                     if k not in ('img', 'img_path')}))
        if bar:
            bar.update()
    images.flush()
    del images
    os.replace(tmp, stem + '.npy')
    with open(stem + '.json.tmp', 'w') as f:
        json.dump(dict(steps=list(steps), shape=list(shape), rows=rows), f)
    os.replace(stem + '.json.tmp', stem + '.json')
    return stem + '.npy'


def load_image_cache(
        cache_file: str) -> Tuple[np.ndarray, dict, Dict[str, int]]:
    """``(images memory-mapped, index json, row of each image path)``, read
    once per process."""
    key = osp.abspath(cache_file)
    if key not in _CACHES:
        stem = osp.splitext(cache_file)[0]
        if not (osp.isfile(stem + '.npy') and osp.isfile(stem + '.json')):
            raise FileNotFoundError(
                f'image cache {cache_file} not found; write it with python '
                'tools/cache_images.py CONFIG --out ' + cache_file)
        with open(stem + '.json') as f:
            index = json.load(f)
        images = np.load(stem + '.npy', mmap_mode='r')
        rows = {osp.normpath(row['img_path']): i
                for i, row in enumerate(index['rows'])}
        _CACHES[key] = (images, index, rows)
    return _CACHES[key]


@TRANSFORMS.register_module()
class LoadCachedImage(BaseTransform):
    """Load an image decoded beforehand from an image cache
    (``tools/cache_images.py``), in place of the pipeline steps the cache
    holds (``LoadImageFromFile`` and the ``Resize`` steps right after it).

    The results are those of the replaced steps, the image a fresh writable
    uint8 array; the steps after it (e.g. ``RandomFlip``) stay in the
    pipeline and draw the same random numbers, so a loader yields the same
    batches as with the replaced steps. An image missing from the cache, a
    file changed since the cache was written (size or modification time) or
    a cache of other steps is refused, naming the command that writes it
    again.

    **Required Keys:** ``img_path``.

    **Added Keys:** ``img`` and what the replaced steps add (``img_shape``,
    ``ori_shape``; ``Resize``: ``scale``, ``scale_factor``, ``keep_ratio``).

    Args:
        cache_file (str): The cache's ``.npy``.
        steps (list[dict], optional): The pipeline steps it replaces, as the
            config wrote them; checked against those the cache was written
            with. Defaults to None: ``[dict(type='LoadImageFromFile')]``.

    Example:
        >>> train_pipeline = [
        ...     dict(type='LoadCachedImage',
        ...          cache_file='data/proxy-voc/image_cache/KEY.npy'),
        ...     dict(type='RandomFlip', prob=0.5, direction='horizontal'),
        ...     dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
        ... ]
    """

    def __init__(self, cache_file: str, steps: Optional[List[dict]] = None):
        self.cache_file = cache_file
        # as the cache's json holds them (tuples as lists)
        self.steps = json.loads(json.dumps(
            [dict(s) for s in steps] if steps else
            [dict(type='LoadImageFromFile')]))

    def transform(self, results: dict) -> dict:
        images, index, rows = load_image_cache(self.cache_file)
        rebuild = ('; write the cache again with python '
                   'tools/cache_images.py CONFIG --out ' + self.cache_file)
        if index['steps'] != self.steps:
            raise ValueError(
                f'image cache {self.cache_file} holds the steps '
                f'{index["steps"]}, the pipeline replaces {self.steps}'
                + rebuild)
        path = results['img_path']
        row = rows.get(osp.normpath(path))
        if row is None:
            raise KeyError(f'{path} is not in the image cache '
                           f'{self.cache_file}' + rebuild)
        entry = index['rows'][row]
        if file_stamp(path) != entry['stamp']:
            raise ValueError(f'image cache {self.cache_file} is stale: {path}'
                             ' changed since it was written' + rebuild)
        results['img'] = np.array(images[row])
        results.update({k: _restored(v) for k, v in entry['results'].items()})
        return results

    def check(self, img_paths: Sequence[str]) -> None:
        """Refuse, before training, what :meth:`transform` would refuse at
        the first batch that meets it: a missing cache, a cache of other
        steps, images it does not hold or that changed since it was
        written (all of them counted, the first named)."""
        images, index, rows = load_image_cache(self.cache_file)
        rebuild = ('; write the cache again with python '
                   'tools/cache_images.py CONFIG --out ' + self.cache_file)
        if index['steps'] != self.steps:
            raise ValueError(
                f'image cache {self.cache_file} holds the steps '
                f'{index["steps"]}, the pipeline replaces {self.steps}'
                + rebuild)
        missing, changed = [], []
        for path in img_paths:
            row = rows.get(osp.normpath(path))
            if row is None:
                missing.append(path)
            elif file_stamp(path) != index['rows'][row]['stamp']:
                changed.append(path)
        if missing or changed:
            found = []
            if missing:
                found.append(f'{len(missing)} images are not in it (first: '
                             f'{missing[0]})')
            if changed:
                found.append(f'{len(changed)} changed since it was written '
                             f'(first: {changed[0]})')
            raise ValueError(
                f'image cache {self.cache_file} is stale for the '
                f'{len(img_paths)} images of the dataset: '
                + '; '.join(found) + rebuild)

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(cache_file={self.cache_file!r}, '
                f'steps={self.steps})')
