"""Open Images-style partial labels: human-verified positives and negatives
per image, every other class unknown.

docs/user_guides/custom_and_partial_data.md ("Open Images-style CSVs").
"""
import csv
import os.path as osp
from typing import Dict, List, Sequence, Tuple

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import ParsedSplit, SPMLLayoutDataset, require_path
from .validation import DatasetError

OPEN_IMAGES_LAYOUT = """\
ROOT/
  oidv6-class-descriptions.csv   `LabelName,DisplayName` rows (a header row
                                 `LabelName,DisplayName` is optional): the
                                 classes, in column order
  oidv6-train-annotations-human-imagelabels.csv
  validation-annotations-human-imagelabels.csv
                                 `ImageID,Source,LabelName,Confidence` rows:
                                 Confidence 1 verified present, 0 verified
                                 absent; a class not listed for an image is
                                 unknown
  train/<ImageID>.jpg  validation/<ImageID>.jpg"""

#: The columns of an image-level label file.
LABEL_COLUMNS = ('ImageID', 'Source', 'LabelName', 'Confidence')


def read_class_descriptions(path: str) -> Tuple[List[str], List[str]]:
    """``LabelName,DisplayName`` rows: the label ids (e.g. ``/m/01g317``)
    and their names, in file order."""
    require_path(path, 'Open Images', OPEN_IMAGES_LAYOUT)
    ids, names = [], []
    with open(path, newline='', encoding='utf-8') as f:
        for number, row in enumerate(csv.reader(f), 1):
            if not row or number == 1 and row[0] == 'LabelName':
                continue
            if len(row) < 2:
                raise ValueError(f'{path}, line {number}: expected '
                                 f'`LabelName,DisplayName`, got {row!r}')
            ids.append(row[0])
            names.append(row[1])
    if len(set(ids)) != len(ids):
        raise ValueError(f'{path}: a LabelName is listed twice')
    return ids, names


def load_open_images_labels(
        path: str, label_ids: Sequence[str]
) -> Tuple[np.ndarray, np.ndarray, Dict[str, int]]:
    """Image-level verified labels as observed labels.

    Args:
        path (str): A ``ImageID,Source,LabelName,Confidence`` CSV (with its
            header row).
        label_ids (Sequence[str]): The classes' LabelNames, in column order.

    Returns:
        tuple: Image ids (N,, sorted), observed labels (N, C) in -1/0/+1
        (Confidence 1: +1, 0: -1, not listed: 0) and counts of the rows
        left out (``'label not among the classes'``).
    """
    require_path(path, 'Open Images', OPEN_IMAGES_LAYOUT)
    column = {label: k for k, label in enumerate(label_ids)}
    entries, problems, outside = {}, [], 0
    with open(path, newline='', encoding='utf-8') as f:
        reader = csv.DictReader(f)
        missing = [c for c in LABEL_COLUMNS if c not in (reader.fieldnames
                                                         or ())]
        if missing:
            raise ValueError(f'{path}: the header lacks {missing}; expected '
                             f'{",".join(LABEL_COLUMNS)}')
        for number, row in enumerate(reader, 2):
            label = row['LabelName']
            if label not in column:
                outside += 1
                continue
            confidence = row['Confidence'].strip()
            if confidence not in ('0', '1', '0.0', '1.0'):
                problems.append(f'{path}, line {number}: Confidence '
                                f'{confidence!r}; human-verified labels are '
                                '1 (present) or 0 (absent)')
                continue
            value = 1 if float(confidence) == 1 else -1
            image = entries.setdefault(row['ImageID'], {})
            if image.get(column[label], value) != value:
                problems.append(f'{path}, line {number}: {row["ImageID"]} '
                                f'has {label} both present and absent')
            image[column[label]] = value
    if problems:
        raise DatasetError(path, problems)
    ids = sorted(entries)
    observed = np.zeros((len(ids), len(label_ids)), dtype=np.float64)
    for k, image in enumerate(ids):
        for c, value in entries[image].items():
            observed[k, c] = value
    return (np.array(ids, dtype=str), observed,
            {'label not among the classes': outside})


def load_open_images_split(root: str,
                           split: str,
                           train_ann_file: str = 'oidv6-train-annotations-'
                           'human-imagelabels.csv',
                           test_ann_file: str = 'validation-annotations-'
                           'human-imagelabels.csv',
                           class_file: str = 'oidv6-class-descriptions.csv',
                           train_prefix: str = 'train',
                           test_prefix: str = 'validation',
                           image_ext: str = '.jpg') -> ParsedSplit:
    """Read one split of Open Images-style image-level labels.

    Each image's verified positives are its observed positives (and its
    labels), its verified negatives its observed negatives, every other
    class unknown; rows are the image ids sorted. The classes are the rows
    of ``class_file`` (give a file of the classes to learn: a label of
    another class is skipped and counted).

    Args:
        root (str): The dataset root.
        split (str): ``'train'`` or ``'val'`` (the protocol's test split).

    Returns:
        ParsedSplit: Paths ``<ImageID><image_ext>`` relative to the split's
        image folder; ``observed`` in -1/0/+1.
    """
    label_ids, names = read_class_descriptions(osp.join(root, class_file))
    ann, prefix = ((train_ann_file, train_prefix) if split == 'train' else
                   (test_ann_file, test_prefix))
    ids, observed, dropped = load_open_images_labels(
        osp.join(root, ann), label_ids)
    labels = (observed == 1).astype(np.float64)
    images = np.array([f'{i}{image_ext}' for i in ids], dtype=str)
    notes = (f'Open Images {ann}: {len(ids)} images, '
             f'{(observed == 1).sum(1).mean() if len(ids) else 0:.2f} '
             'verified positives and '
             f'{(observed == -1).sum(1).mean() if len(ids) else 0:.2f} '
             f'verified negatives per image over {len(label_ids)} classes; '
             f'{int((~labels.any(1)).sum())} images without a verified '
             f'positive; {dropped["label not among the classes"]} rows of '
             'other classes skipped', )
    return ParsedSplit(images, labels, tuple(names), prefix, {}, observed,
                       notes)


@DATASETS.register_module()
class SPMLOpenImages(SPMLLayoutDataset):
    """Open Images-style partial labels (:func:`load_open_images_split`).

    Trains on each image's verified positives and verified negatives, the
    rest unknown (set ``single_positive=False``: images verify several
    positives); the protocol's ``val`` split (``val_frac`` of the training
    images) and the test split are evaluated on their annotated entries
    (``spml/mAP_annotated``). An image without a verified positive is
    evaluated and left out of training.

    Args:
        data_root (str): The dataset root.
        train_ann_file (str): Labels of the training images.
        test_ann_file (str): Labels of the test images.
        class_file (str): ``LabelName,DisplayName`` rows of the classes.
        train_prefix (str): Folder of the training images.
        test_prefix (str): Folder of the test images.
        image_ext (str): Ending of the image files. Defaults to ``'.jpg'``.
        **kwargs: Other arguments of :class:`SPMLDataset`.
    """

    def __init__(self,
                 data_root: str = '',
                 train_ann_file: str = 'oidv6-train-annotations-human-'
                 'imagelabels.csv',
                 test_ann_file: str = 'validation-annotations-human-'
                 'imagelabels.csv',
                 class_file: str = 'oidv6-class-descriptions.csv',
                 train_prefix: str = 'train',
                 test_prefix: str = 'validation',
                 image_ext: str = '.jpg',
                 **kwargs):
        self.files = dict(train_ann_file=train_ann_file,
                          test_ann_file=test_ann_file, class_file=class_file,
                          train_prefix=train_prefix, test_prefix=test_prefix,
                          image_ext=image_ext)
        super().__init__(data_root=data_root, **kwargs)

    def parse_split(self, official_split: str) -> ParsedSplit:
        return load_open_images_split(self.data_root, official_split,
                                      **self.files)

