"""CUB-200-2011 attributes from the official layout.

Images kept, their order and the label columns: docs/methods/protocol.md,
"Datasets and observed labels".
"""
import os.path as osp
from typing import List, Tuple

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import (ParsedSplit, SPMLLayoutDataset, line_error, read_rows,
                     require_path)

CUB_LAYOUT = """\
ROOT/                              (where CUB_200_2011.tgz was extracted)
  attributes.txt                   (`<attribute id> <name>`, 312 lines)
  CUB_200_2011/
    images.txt                     (`<image id> <path>`)
    train_test_split.txt           (`<image id> <1 train | 0 test>`)
    attributes/image_attribute_labels.txt
                                   (`<image id> <attribute id> <is_present>
                                    <certainty id> <time>`, one line per
                                    image and attribute)
    images/<class folder>/<file>.jpg"""

#: ``is_training_image`` value of each official split.
CUB_SPLIT_FLAG = dict(train='1', val='0')


def _read_id_table(path: str, what: str) -> List[Tuple[int, str, str]]:
    """Read ``<id> <value>`` lines as ``(line number, id, value)``."""
    rows = []
    for number, fields in read_rows(path):
        if len(fields) != 2:
            raise line_error(path, number,
                             f'expected `<id> <{what}>`, got {fields}')
        rows.append((number, fields[0], fields[1]))
    if not rows:
        raise ValueError(f'{path} is empty; expected `<id> <{what}>` lines.')
    return rows


def _read_is_present(path: str, image_ids: List[str],
                     attribute_ids: List[str]) -> np.ndarray:
    """The ``is_present`` matrix of ``image_attribute_labels.txt``.

    Row ``k`` of the file must hold image ``k // A`` and attribute
    ``k % A`` (images.txt and attributes.txt order); fields after the third
    (certainty, time, and the extra field some official lines carry) are
    ignored.
    """
    num_attributes = len(attribute_ids)
    expected = len(image_ids) * num_attributes
    present = np.zeros(expected, dtype=np.float64)
    k = last = 0
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            last = number
            if k == expected:
                raise line_error(
                    path, number,
                    f'one row more than {len(image_ids)} images (images.txt) '
                    f'x {num_attributes} attributes (attributes.txt) = '
                    f'{expected} rows.')
            image, attribute = (image_ids[k // num_attributes],
                                attribute_ids[k % num_attributes])
            if (len(fields) < 3 or fields[0] != image
                    or fields[1] != attribute or fields[2] not in ('0', '1')):
                raise line_error(
                    path, number,
                    f'expected `{image} {attribute} <0|1> ...` (image '
                    f'{image}, attribute {attribute}), got {line.strip()!r}; '
                    'the file holds one row per image (images.txt order) and '
                    'attribute (attributes.txt order), so a row is missing, '
                    'extra or out of order.')
            present[k] = fields[2] == '1'
            k += 1
    if k != expected:
        raise ValueError(
            f'{path} has {k} rows, expected {len(image_ids)} images '
            f'(images.txt) x {num_attributes} attributes (attributes.txt) = '
            f'{expected}; the row after line {last} is missing (image '
            f'{image_ids[k // num_attributes]}, attribute '
            f'{attribute_ids[k % num_attributes]}).')
    return present.reshape(len(image_ids), num_attributes)


def load_cub_split(root: str, split: str) -> ParsedSplit:
    """Read an official CUB-200-2011 split with its 312 binary attributes.

    Labels are the ``is_present`` field of
    ``attributes/image_attribute_labels.txt``; ``train_test_split.txt``
    chooses the images; rows keep ``images.txt`` order. Every image is kept,
    as in the community code's ``format_cub.py``, also one without any
    present attribute: dropping it would shift the seeded observations and
    train/val split of every image after it. Such an image is evaluated
    where it is a validation or test image and left out of training by
    :class:`SPMLDataset`.

    Args:
        root (str): Folder holding ``attributes.txt`` and ``CUB_200_2011/``.
        split (str): ``'train'`` or ``'val'`` (the official test split).

    Returns:
        ParsedSplit: Paths relative to ``CUB_200_2011/images``; columns in
        ``attributes.txt`` order.
    """
    name = 'CUB-200-2011'
    cub = osp.join(root, 'CUB_200_2011')
    image_dir = osp.join('CUB_200_2011', 'images')
    attribute_path = require_path(
        osp.join(root, 'attributes.txt'), name, CUB_LAYOUT)
    images_path = require_path(
        osp.join(cub, 'images.txt'), name, CUB_LAYOUT)
    split_path = require_path(
        osp.join(cub, 'train_test_split.txt'), name, CUB_LAYOUT)
    labels_path = require_path(
        osp.join(cub, 'attributes', 'image_attribute_labels.txt'), name,
        CUB_LAYOUT)
    require_path(osp.join(root, image_dir), name, CUB_LAYOUT, folder=True)

    _, attribute_ids, attributes = zip(*_read_id_table(attribute_path, 'name'))
    _, image_ids, paths = zip(*_read_id_table(images_path, 'path'))
    flags = []
    for k, (number, image, flag) in enumerate(
            _read_id_table(split_path, '1|0')):
        if k >= len(image_ids) or image != image_ids[k]:
            listed = image_ids[k] if k < len(image_ids) else 'no image'
            raise line_error(
                split_path, number,
                f'image {image} where {images_path} lists {listed} as entry '
                f'{k + 1}; both files list the images in the same order.')
        if flag not in ('0', '1'):
            raise line_error(split_path, number,
                             f'expected 1 (train) or 0 (test), got {flag!r}')
        flags.append(flag)
    if len(flags) != len(image_ids):
        raise ValueError(
            f'{split_path} lists {len(flags)} images but {images_path} lists '
            f'{len(image_ids)}; both files list the same images.')
    labels = _read_is_present(labels_path, image_ids, attribute_ids)
    keep = np.array(flags) == CUB_SPLIT_FLAG[split]
    return ParsedSplit(
        np.array(paths, dtype=str)[keep], labels[keep], tuple(attributes),
        image_dir, {})


@DATASETS.register_module()
class SPMLCUB(SPMLLayoutDataset):
    """CUB-200-2011 attributes read from the official layout, under SPML.

    Reads the 312 ``is_present`` attributes with :func:`load_cub_split`
    (``train_test_split.txt`` split, ``images.txt`` order) and applies the
    protocol of :class:`SPMLDataset`.

    Args:
        data_root (str): Where ``CUB_200_2011.tgz`` was extracted (holding
            ``attributes.txt`` and ``CUB_200_2011/``).
        **kwargs: The other arguments of :class:`SPMLDataset`.

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLCUB', data_root='data/CUB', split='train',
        ...     pipeline=train_pipeline))
    """

    read_split = staticmethod(load_cub_split)
