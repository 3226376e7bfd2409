"""MS-COCO 2014 from its official layout.

Images kept, their order and the label columns: docs/methods/protocol.md,
"Datasets and observed labels".
"""
import json
import os.path as osp

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import ParsedSplit, SPMLLayoutDataset, require_path

COCO_LAYOUT = """\
ROOT/
  annotations/instances_{train,val}2014.json
  train2014/COCO_train2014_<12-digit id>.jpg
  val2014/COCO_val2014_<12-digit id>.jpg"""


def load_coco_split(root: str, split: str) -> ParsedSplit:
    """Read an official COCO 2014 split from ``instances_<split>2014.json``.

    Only images with at least one instance annotation are kept, ordered by
    image id sorted as strings (the released order: ``'10' < '9'``); the
    columns follow the json's ``categories`` list.

    Args:
        root (str): Folder holding ``annotations/``, ``train2014/`` and
            ``val2014/``.
        split (str): ``'train'`` or ``'val'``.

    Returns:
        ParsedSplit: Paths ``<split>2014/<file_name>`` relative to ``root``.

    Raises:
        ValueError: An annotation names a category or an image the json does
            not list; the message gives its position in ``annotations``.
    """
    path = require_path(
        osp.join(root, 'annotations', f'instances_{split}2014.json'),
        'COCO 2014', COCO_LAYOUT)
    folder = f'{split}2014'
    require_path(osp.join(root, folder), 'COCO 2014', COCO_LAYOUT, folder=True)
    with open(path) as f:
        data = json.load(f)
    categories = data['categories']
    column = {cat['id']: k for k, cat in enumerate(categories)}
    file_names = {image['id']: image['file_name'] for image in data['images']}

    pairs = []
    for k, ann in enumerate(data['annotations']):
        where = f'{path}: annotations[{k}] (annotation id {ann.get("id")})'
        if ann['category_id'] not in column:
            raise ValueError(
                f'{where} has category_id {ann["category_id"]}, which is not '
                f'in the categories list (ids {sorted(column)}).')
        if ann['image_id'] not in file_names:
            raise ValueError(
                f'{where} has image_id {ann["image_id"]}, which is not in the '
                'images list.')
        pairs.append((ann['image_id'], column[ann['category_id']]))

    order = [int(i) for i in sorted({str(i) for i, _ in pairs})]
    row = {image_id: r for r, image_id in enumerate(order)}
    labels = np.zeros((len(order), len(categories)), dtype=np.float64)
    for image_id, col in pairs:
        labels[row[image_id], col] = 1
    images = np.array(
        [f'{folder}/{file_names[image_id]}' for image_id in order], dtype=str)
    classes = tuple(cat['name'] for cat in categories)
    return ParsedSplit(images, labels, classes, '',
                       {'without instance': len(file_names) - len(order)})


@DATASETS.register_module()
class SPMLCOCO(SPMLLayoutDataset):
    """MS-COCO 2014 read from its official layout, under the SPML protocol.

    Reads ``annotations/instances_{train,val}2014.json`` with
    :func:`load_coco_split` (images with an instance, ids sorted as strings,
    80 classes in json order) and applies the protocol of
    :class:`SPMLDataset`. Each dataset object parses its json when built;
    ``tools/prepare_spml.py coco`` parses it once for all runs.

    Args:
        data_root (str): Folder holding ``annotations/``, ``train2014/`` and
            ``val2014/``.
        **kwargs: The other arguments of :class:`SPMLDataset`.

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLCOCO', data_root='data/coco2014', split='train',
        ...     pipeline=train_pipeline))
    """

    read_split = staticmethod(load_coco_split)
