"""PASCAL VOC 2012 from its official layout.

Images kept, their order and the label columns: docs/methods/protocol.md,
"Datasets and observed labels".
"""
import os.path as osp

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import (ParsedSplit, SPMLLayoutDataset, line_error, read_rows,
                     require_path)

#: The 20 VOC classes in their alphabetical order (the label columns).
VOC_CLASSES = ('aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car',
               'cat', 'chair', 'cow', 'diningtable', 'dog', 'horse',
               'motorbike', 'person', 'pottedplant', 'sheep', 'sofa', 'train',
               'tvmonitor')

VOC_LAYOUT = """\
ROOT/                         (where VOCtrainval_11-May-2012.tar was extracted)
  VOCdevkit/VOC2012/          (ROOT may also be this folder itself)
    ImageSets/Main/<class>_{train,val}.txt  (`<image id> <-1|0|1>` lines)
    JPEGImages/<image id>.jpg"""


def _voc2012_dir(root: str) -> str:
    """The VOC2012 folder relative to ``root`` (``''`` when it is ROOT)."""
    for sub in ('VOCdevkit/VOC2012', ''):
        if osp.isdir(osp.join(root, sub, 'ImageSets', 'Main')):
            return sub
    nested = osp.join(root, 'VOCdevkit', 'VOC2012', 'ImageSets', 'Main')
    raise FileNotFoundError(
        f'VOC 2012: neither {nested} nor {osp.join(root, "ImageSets", "Main")}'
        f' exists. Expected layout:\n{VOC_LAYOUT}')


def load_voc_split(root: str, split: str) -> ParsedSplit:
    """Read an official VOC 2012 split from ``ImageSets/Main``.

    A class file lists every image of the split with ``1`` (positive), ``-1``
    (negative) or ``0`` (difficult, counted as negative). Images without a
    positive are dropped; rows are sorted by file name (``<image id>.jpg``).

    Args:
        root (str): The extracted archive, or its ``VOCdevkit/VOC2012``.
        split (str): ``'train'`` or ``'val'``.

    Returns:
        ParsedSplit: Paths relative to ``JPEGImages``; 20 columns in
        :data:`VOC_CLASSES` order.
    """
    voc = _voc2012_dir(root)
    image_dir = osp.join(voc, 'JPEGImages')
    require_path(
        osp.join(root, image_dir), 'VOC 2012', VOC_LAYOUT, folder=True)
    ids, columns, first = [], [], None
    for cls in VOC_CLASSES:
        path = require_path(
            osp.join(root, voc, 'ImageSets', 'Main', f'{cls}_{split}.txt'),
            'VOC 2012', VOC_LAYOUT)
        column = []
        for number, fields in read_rows(path):
            if len(fields) != 2 or fields[1] not in ('-1', '0', '1'):
                raise line_error(
                    path, number, 'expected `<image id> <-1|0|1>`, got '
                    f'{" ".join(fields)!r}')
            k = len(column)
            if first is None:
                ids.append(fields[0])
            elif k >= len(ids) or fields[0] != ids[k]:
                listed = (f'image {ids[k]} as its entry {k + 1}'
                          if k < len(ids) else f'only {len(ids)} images')
                raise line_error(
                    path, number,
                    f'image {fields[0]} disagrees with {first}, which lists '
                    f'{listed}; every class file of a split must list the '
                    'same images in the same order.')
            column.append(fields[1] == '1')
        if first is None:
            first = path
        elif len(column) != len(ids):
            raise ValueError(
                f'{path} ends after {len(column)} images but {first} lists '
                f'{len(ids)}; every class file of a split must list the same '
                'images.')
        columns.append(column)
    labels = np.array(columns, dtype=np.float64).T
    names = np.array([f'{image_id}.jpg' for image_id in ids], dtype=str)
    keep = np.flatnonzero(labels.any(1))
    keep = keep[np.argsort(names[keep], kind='stable')]
    return ParsedSplit(names[keep], labels[keep], VOC_CLASSES, image_dir,
                       {'without positive': len(ids) - len(keep)})


@DATASETS.register_module()
class SPMLVOC(SPMLLayoutDataset):
    """PASCAL VOC 2012 read from its official layout, under the SPML protocol.

    Reads ``ImageSets/Main/<class>_{train,val}.txt`` with
    :func:`load_voc_split` (difficult counts as negative, images without a
    positive dropped, rows sorted by file name) and applies the protocol of
    :class:`SPMLDataset`: the same samples as ``SPMLDataset`` on the output of
    ``tools/prepare_spml.py voc``.

    Args:
        data_root (str): Where ``VOCtrainval_11-May-2012.tar`` was extracted
            (holding ``VOCdevkit/VOC2012``), or ``VOC2012`` itself.
        **kwargs: The other arguments of :class:`SPMLDataset`;
            ``data_prefix`` stays ``''`` since image paths are found from the
            layout.

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLVOC', data_root='data/VOCtrainval', split='train',
        ...     pipeline=train_pipeline))
    """

    read_split = staticmethod(load_voc_split)
