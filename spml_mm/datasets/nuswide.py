"""NUS-WIDE from its official layout.

Images kept, their order and the label columns: docs/methods/protocol.md,
"Datasets and observed labels".
"""
import os.path as osp

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import (ParsedSplit, SPMLLayoutDataset, line_error, read_rows,
                     require_path)

NUSWIDE_LAYOUT = """\
ROOT/
  Concepts81.txt                                   (one concept per line)
  ImageList/{Train,Test}Imagelist.txt              (`<folder>\\<file>.jpg`)
  TrainTestLabels/Labels_<concept>_{Train,Test}.txt  (one 0/1 per image)
  Flickr/<folder>/<file>.jpg                       (the images)"""

#: File-name tag of each official split.
NUSWIDE_SPLIT_TAG = dict(train='Train', val='Test')


def _read_label_file(path: str, list_path: str, num_images: int) -> np.ndarray:
    """One 0/1 per line, as many lines as images; errors name the line."""
    with open(path) as f:
        rows = [line.strip() for line in f]
    values = [row for row in rows if row]
    if len(values) == num_images and set(values) <= {'0', '1'}:
        return np.array(values) == '1'
    count = 0
    for number, row in enumerate(rows, 1):
        if not row:
            continue
        if count == num_images:
            raise line_error(
                path, number,
                f'one line more than the {num_images} images of {list_path}.')
        if row not in ('0', '1'):
            raise line_error(path, number, f'expected 0 or 1, got {row!r}')
        count += 1
    raise ValueError(
        f'{path} ends after {count} lines but {list_path} lists {num_images} '
        'images; each label file has one line per image.')


def load_nuswide_split(root: str, split: str) -> ParsedSplit:
    """Read an official NUS-WIDE split from the image list and concept labels.

    Backslashes of the list become ``/``; rows keep the list's order. Images
    without a positive concept, and images missing from ``Flickr/``, are
    dropped and counted.

    Args:
        root (str): Folder holding ``Concepts81.txt``, ``ImageList/``,
            ``TrainTestLabels/`` and ``Flickr/``.
        split (str): ``'train'`` or ``'val'`` (the official test split).

    Returns:
        ParsedSplit: Paths relative to ``Flickr``; columns in
        ``Concepts81.txt`` order.
    """
    tag = NUSWIDE_SPLIT_TAG[split]
    name = 'NUS-WIDE'
    concept_path = require_path(
        osp.join(root, 'Concepts81.txt'), name, NUSWIDE_LAYOUT)
    list_path = require_path(
        osp.join(root, 'ImageList', f'{tag}Imagelist.txt'), name,
        NUSWIDE_LAYOUT)
    image_dir = 'Flickr'
    require_path(osp.join(root, image_dir), name, NUSWIDE_LAYOUT, folder=True)
    concepts = tuple(fields[0] for _, fields in read_rows(concept_path))
    images = []
    for number, fields in read_rows(list_path):
        if len(fields) != 1:
            raise line_error(list_path, number,
                             f'expected one image path, got {fields}')
        images.append(fields[0].replace('\\', '/'))
    images = np.array(images, dtype=str)

    labels = np.zeros((len(images), len(concepts)), dtype=np.float64)
    for col, concept in enumerate(concepts):
        path = require_path(
            osp.join(root, 'TrainTestLabels', f'Labels_{concept}_{tag}.txt'),
            name, NUSWIDE_LAYOUT)
        labels[:, col] = _read_label_file(path, list_path, len(images))

    positive = labels.any(1)
    keep = np.array([
        has_pos and osp.isfile(osp.join(root, image_dir, path))
        for has_pos, path in zip(positive, images)
    ], dtype=bool)
    return ParsedSplit(images[keep], labels[keep], concepts, image_dir, {
        'without positive': int((~positive).sum()),
        'missing on disk': int((positive & ~keep).sum())
    })


@DATASETS.register_module()
class SPMLNUSWIDE(SPMLLayoutDataset):
    """NUS-WIDE read from its official layout, under the SPML protocol.

    Reads ``ImageList/{Train,Test}Imagelist.txt`` and
    ``TrainTestLabels/Labels_<concept>_{Train,Test}.txt`` with
    :func:`load_nuswide_split` (81 concepts, list order, images without a
    positive or missing on disk dropped) and applies the protocol of
    :class:`SPMLDataset`.

    Args:
        data_root (str): Folder holding ``Concepts81.txt``, ``ImageList/``,
            ``TrainTestLabels/`` and the images under ``Flickr/``.
        **kwargs: The other arguments of :class:`SPMLDataset`.

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLNUSWIDE', data_root='data/NUS-WIDE', split='train',
        ...     pipeline=train_pipeline))
    """

    read_split = staticmethod(load_nuswide_split)
