"""ImageNet-1k's single labels as real single positives, tested on ReaL.

ImageNet gives each training image one label, chosen by its collection
pipeline, not drawn among the image's true labels; ReaL (Beyer et al. 2020,
``google-research/reassessed-imagenet``) relabelled the 50,000 validation
images with label sets. :class:`SPMLImageNet` trains on the single labels as
observed positives (every other class unknown), validates on them
(``spml/mAP_observed``) and tests on ReaL's label sets (``spml/mAP``), leaving
out the validation images whose ReaL set is empty, as ReaL's protocol does.
docs/user_guides/datasets.md ("Real single-positive data").
"""
import json
import os
import os.path as osp
import re
from typing import List, Optional, Sequence, Tuple

import numpy as np
from mmpretrain.registry import DATASETS

from .class_folders import (IMAGE_EXTENSIONS, read_class_folders,
                            single_labels)
from .layout import (ParsedSplit, SPMLLayoutDataset, line_error, read_rows,
                     require_path)

#: Classes of ImageNet-1k, the columns of ReaL's label indices.
IMAGENET_NUM_CLASSES = 1000

IMAGENET_LAYOUT = """\
ROOT/                          (MMPretrain's ImageNet layout)
  train/<wnid>/<image>.JPEG    the 1000 class folders, or
  meta/train.txt               `<wnid>/<image>.JPEG <class index>` lines
  val/ILSVRC2012_val_<8 digits>.JPEG  (or val/<wnid>/...; the number is the
                               image's row in real.json)
  meta/val.txt                 (optional) `<image> <class index>` lines
  real.json                    ReaL's labels: a list, in validation-image
                               order, of each image's label indices
                               (google-research/reassessed-imagenet)"""

#: The official validation file names; the number is the image's position.
VAL_NAME = re.compile(r'ILSVRC2012_val_(\d+)')


def _read_index_file(path: str, num_classes: int
                     ) -> Tuple[List[str], List[int]]:
    """``<path> <class index>`` lines of ``meta/{train,val}.txt``."""
    paths, labels = [], []
    for number, fields in read_rows(path):
        if len(fields) != 2 or not fields[1].lstrip('-').isdigit():
            raise line_error(path, number,
                             f'expected `<image> <class index>`, got '
                             f'{" ".join(fields)!r}')
        label = int(fields[1])
        if not 0 <= label < num_classes:
            raise line_error(path, number, f'class index {label} is outside '
                             f'[0, {num_classes})')
        paths.append(fields[0])
        labels.append(label)
    return paths, labels


def _imagenet_classes(classes: Optional[Sequence[str]]) -> Tuple[str, ...]:
    if classes is not None:
        return tuple(classes)
    from mmpretrain.datasets.categories import IMAGENET_CATEGORIES
    return tuple(IMAGENET_CATEGORIES)


def read_real_labels(path: str, num_classes: int) -> List[List[int]]:
    """ReaL's ``real.json``: one list of class indices per validation image,
    in the order of the official file names (row ``k`` is
    ``ILSVRC2012_val_<k + 1>``)."""
    require_path(path, 'ImageNet ReaL', IMAGENET_LAYOUT)
    with open(path) as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        raise ValueError(f'{path}: a {type(rows).__name__}; ReaL labels are '
                         'a list of label lists, one per validation image.')
    for k, row in enumerate(rows):
        if not isinstance(row, list) or not all(
                isinstance(c, int) and 0 <= c < num_classes for c in row):
            raise ValueError(
                f'{path}: row {k} (ILSVRC2012_val_{k + 1:08d}) is {row!r}; '
                f'expected a list of class indices in [0, {num_classes}).')
    return rows


def _val_images(root: str) -> Tuple[List[str], Optional[List[int]]]:
    """The validation images, relative to ``val/``, and their single labels
    where ``meta/val.txt`` gives them."""
    ann = osp.join(root, 'meta', 'val.txt')
    if osp.isfile(ann):
        return _read_index_file(ann, IMAGENET_NUM_CLASSES)
    folder = require_path(
        osp.join(root, 'val'), 'ImageNet', IMAGENET_LAYOUT, folder=True)
    paths = sorted(
        osp.relpath(osp.join(base, file), folder)
        for base, _, files in os.walk(folder) for file in files
        if file.lower().endswith(IMAGE_EXTENSIONS))
    return sorted(paths, key=osp.basename), None


def load_imagenet_split(root: str,
                        split: str,
                        real_file: Optional[str] = 'real.json',
                        classes: Optional[Sequence[str]] = None
                        ) -> ParsedSplit:
    """Read an official ImageNet-1k split.

    ``'train'``: ``meta/train.txt`` when it exists, else the class folders
    of ``train/`` (the 1000 wnids, sorted: ImageNet's class indices); each
    image observes its one label, every other class unknown.
    ``'val'``: the images of ``meta/val.txt`` (else every image under
    ``val/``), each labelled with its row of ``real_file``: the row of
    ``ILSVRC2012_val_<n>`` is the n-th; images whose ReaL set is empty are
    left out (and counted). Without ``real_file`` (None) the single labels
    of ``meta/val.txt`` are the observation.

    Args:
        root (str): The ImageNet root (layout: :data:`IMAGENET_LAYOUT`).
        split (str): ``'train'`` or ``'val'``.
        real_file (str, optional): ReaL's labels, relative to ``root`` (or
            absolute). Defaults to ``'real.json'``.
        classes (Sequence[str], optional): Class names; default MMPretrain's
            ``IMAGENET_CATEGORIES``.

    Returns:
        ParsedSplit: Paths relative to ``train`` or ``val``; its ``notes``
        give the counts (and, for ReaL, the rows matched and left out).
    """
    classes = _imagenet_classes(classes)
    num_classes = len(classes)
    if split == 'train':
        ann = osp.join(root, 'meta', 'train.txt')
        if osp.isfile(ann):
            paths, indices = _read_index_file(ann, num_classes)
            source = 'meta/train.txt'
        else:
            folders = osp.join(root, 'train')
            paths, indices, wnids = read_class_folders(
                folders, None, 'ImageNet', IMAGENET_LAYOUT)
            if len(wnids) != num_classes:
                raise ValueError(
                    f'ImageNet: {folders} holds {len(wnids)} class folders; '
                    f'the class indices (and ReaL\'s) are the positions of the '
                    f'{num_classes} wnids in sorted order, so every class '
                    'needs its folder (an empty one will do) or '
                    'meta/train.txt must give the indices. For class folders '
                    'of another dataset use SPMLClassFolderDataset.')
            source = 'train/<wnid>/ folders'
        labels, observed = single_labels(indices, num_classes)
        notes = (f'ImageNet train ({source}): {len(paths)} images with one '
                 f'label each, {int((labels.sum(0) > 0).sum())} of '
                 f'{num_classes} classes present', )
        return ParsedSplit(np.array(paths, dtype=str), labels, classes,
                           'train', {}, observed, notes)

    paths, single = _val_images(root)
    if real_file is None:
        if single is None:
            raise FileNotFoundError(
                f'ImageNet: without real_file the test labels are those of '
                f'{osp.join(root, "meta", "val.txt")}, which is missing.')
        labels, observed = single_labels(single, num_classes)
        return ParsedSplit(
            np.array(paths, dtype=str), labels, classes, 'val', {}, observed,
            (f'ImageNet val: {len(paths)} images, single labels of '
             'meta/val.txt (no ReaL file)', ))
    real_path = osp.join(root, real_file)
    real = read_real_labels(real_path, num_classes)
    rows = []
    for path in paths:
        found = VAL_NAME.search(osp.basename(path))
        if not found:
            raise ValueError(
                f'ImageNet: validation image {path} is not named '
                'ILSVRC2012_val_<number>; ReaL labels the images by their '
                'official names, whose number is the row of real.json.')
        row = int(found.group(1)) - 1
        if not 0 <= row < len(real):
            raise ValueError(
                f'ImageNet: validation image {path} is row {row + 1} of '
                f'real.json, which has {len(real)} rows.')
        rows.append(row)
    if len(set(rows)) != len(rows):
        raise ValueError('ImageNet: two validation images have the same '
                         'number (the same ReaL row).')
    rows = np.array(rows, dtype=np.int64)
    labelled = np.array([bool(real[r]) for r in rows], dtype=bool)
    labels = np.zeros((len(rows), num_classes), dtype=np.float64)
    for k, r in enumerate(rows):
        labels[k, real[r]] = 1
    kept = labels[labelled]
    notes = [
        f'ReaL {real_path}: {len(real)} rows, {len(rows)} matched to local '
        f'validation images ({len(real) - len(rows)} rows without one); '
        f'{int((~labelled).sum())} matched rows empty, left out of the '
        f'evaluation as ReaL\'s protocol does; {int(labelled.sum())} images '
        f'evaluated, {kept.sum(1).mean() if len(kept) else 0:.2f} labels per '
        f'image, {100 * (kept.sum(1) > 1).mean() if len(kept) else 0:.1f}% '
        'multi-label'
    ]
    if single is not None and labelled.any():
        agree = np.mean([labels[k, single[k]] == 1
                         for k in np.flatnonzero(labelled)])
        notes.append(
            f'meta/val.txt\'s single label is in the ReaL set of '
            f'{100 * agree:.1f}% of the evaluated images (about 90% on the '
            'real data; far less means a wrong row mapping)')
    return ParsedSplit(
        np.array(paths, dtype=str)[labelled], kept, classes, 'val',
        {'empty ReaL label set': int((~labelled).sum())}, None, tuple(notes))


@DATASETS.register_module()
class SPMLImageNet(SPMLLayoutDataset):
    """ImageNet-1k's single labels as single positives, tested on ReaL.

    Reads MMPretrain's ImageNet layout (:func:`load_imagenet_split`): the
    official train split (``meta/train.txt`` or ``train/<wnid>/``) observes
    each image's one label as its positive, every other class unknown (no
    protocol draw); the protocol's ``val`` split (``val_frac`` of it, drawn
    by :func:`split_train_val`) validates on these observed labels
    (``spml/mAP_observed``); the ``test`` split is the official validation
    images with ReaL's label sets from ``real_file`` (``spml/mAP`` on full
    labels), the images with an empty set left out.

    Args:
        data_root (str): The ImageNet root.
        real_file (str, optional): ReaL's ``real.json`` (relative to
            ``data_root`` or absolute); None tests on ``meta/val.txt``'s
            single labels as observed labels. Defaults to ``'real.json'``.
        **kwargs: Other arguments of :class:`SPMLDataset` (``split``,
            ``val_frac``, ``classes``, ``pipeline``...).

    Example:
        >>> dataset = dict(type='SPMLImageNet', data_root='data/imagenet',
        ...                split='test', real_file='real.json')
    """

    def __init__(self,
                 data_root: str = '',
                 real_file: Optional[str] = 'real.json',
                 **kwargs):
        self.real_file = real_file
        super().__init__(data_root=data_root, **kwargs)

    def parse_split(self, official_split: str) -> ParsedSplit:
        classes = (None if self._classes_arg is None else
                   self.metainfo['classes'])
        return load_imagenet_split(self.data_root, official_split,
                                   self.real_file, classes)
