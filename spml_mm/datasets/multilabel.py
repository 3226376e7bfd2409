"""Custom multi-label datasets in MMPretrain's annotation format."""
import os.path as osp
from typing import Optional, Sequence

import mmengine
import numpy as np
from mmpretrain.registry import DATASETS

from .layout import ParsedSplit, SPMLLayoutDataset, require_path
from .validation import DatasetError

MULTILABEL_LAYOUT = """\
an annotation file as MMPretrain's MultiLabelDataset reads (json, yaml or
pickle):
  {"metainfo": {"classes": ["cat", "dog", ...]},
   "data_list": [{"img_path": "a.jpg", "gt_label": [0, 2]}, ...]}
with img_path relative to data_root/data_prefix; partial annotations add
"gt_label_neg": [1, 3] (the classes known absent) to any entry."""


def _class_indices(value, num_classes: int) -> Optional[np.ndarray]:
    """A ``gt_label``-style list as class indices, or None if it is not a
    flat list of ints in ``[0, num_classes)``."""
    try:
        indices = np.asarray(value).reshape(-1)
    except ValueError:  # ragged nesting
        return None
    if indices.size and (indices.dtype.kind not in 'iu' or indices.min() < 0
                         or indices.max() >= num_classes):
        return None
    return indices.astype(np.int64)


def load_multilabel_annotations(
        ann_file: str,
        classes: Optional[Sequence[str]] = None) -> ParsedSplit:
    """Read one split of a custom dataset from a ``MultiLabelDataset`` file.

    Images without a label are dropped and counted; rows keep the file's
    order. A file whose entries carry ``gt_label_neg`` (the classes known
    absent) holds partial annotations: its labels are the observation
    (``gt_label`` observed positive, ``gt_label_neg`` observed negative,
    any other class unobserved) and the full labels are the listed
    positives.

    Args:
        ann_file (str): The annotation file (``metainfo.classes`` and a
            ``data_list`` of ``img_path`` and ``gt_label`` indices, and
            optionally ``gt_label_neg`` indices).
        classes (Sequence[str], optional): Class names; default to the file's
            ``metainfo.classes``.

    Returns:
        ParsedSplit: Paths as the file gives them; one column per class;
        ``observed`` in -1/0/+1 for partial annotations, else None.
    """
    require_path(ann_file, 'custom dataset', MULTILABEL_LAYOUT)
    data = mmengine.load(ann_file)
    if not isinstance(data, dict) or 'data_list' not in data:
        raise ValueError(f'{ann_file} has no `data_list`; expected\n'
                         f'{MULTILABEL_LAYOUT}')
    if classes is None:
        classes = data.get('metainfo', {}).get('classes')
    if classes is None:
        raise ValueError(
            f'{ann_file} has no `metainfo.classes`; add it to the file or '
            'give `classes` to the dataset.')
    items = data['data_list']
    if not isinstance(items, list):
        raise ValueError(f'{ann_file}: `data_list` is a '
                         f'{type(items).__name__}; expected a list:\n'
                         f'{MULTILABEL_LAYOUT}')
    labels = np.zeros((len(items), len(classes)), dtype=np.float64)
    negatives = np.zeros_like(labels)
    problems = []
    for k, item in enumerate(items):
        where = f'{ann_file}: data_list[{k}]'
        if not isinstance(item, dict):
            problems.append(f'{where} is a {type(item).__name__} '
                            f'({item!r:.40}); expected a dict with '
                            '`img_path` and `gt_label`.')
            continue
        if 'img_path' not in item or 'gt_label' not in item:
            problems.append(f'{where} needs `img_path` and `gt_label`, got '
                            f'{sorted(item)}.')
            continue
        if not isinstance(item['img_path'], str):
            problems.append(f'{where} has img_path {item["img_path"]!r}; '
                            'expected a path string.')
            continue
        for key, matrix in (('gt_label', labels),
                            ('gt_label_neg', negatives)):
            indices = _class_indices(item.get(key, []), len(classes))
            if indices is None:
                problems.append(
                    f'{where} ({item["img_path"]}) has {key} '
                    f'{item[key]!r}; labels are class indices in '
                    f'[0, {len(classes)}).')
                break
            matrix[k, indices] = 1
        both = np.flatnonzero(labels[k] * negatives[k])
        if both.size:
            problems.append(f'{where} ({item["img_path"]}) lists classes '
                            f'{both.tolist()} in gt_label and gt_label_neg.')
    if problems:
        raise DatasetError(f'{ann_file}', problems)
    images = np.array([item['img_path'] for item in items], dtype=str)
    keep = labels.any(1)
    partial = any('gt_label_neg' in item for item in items)
    observed = (labels - negatives)[keep] if partial else None
    return ParsedSplit(images[keep], labels[keep], tuple(classes), '',
                       {'without positive': int((~keep).sum())}, observed)


@DATASETS.register_module()
class SPMLMultiLabelDataset(SPMLLayoutDataset):
    """A custom multi-label dataset under the SPML protocol.

    Reads two annotation files in the format of MMPretrain's
    ``MultiLabelDataset`` (image path and label indices per image): one for
    the official train split, divided into the protocol's ``train`` and
    ``val`` splits, and one for the ``test`` split. The protocol is the one of
    :class:`SPMLDataset` (single positive by :func:`observe_uniform`, train /
    val split by :func:`split_train_val`); images without a label are dropped.
    Entries with ``gt_label_neg`` make a file partial annotations
    (:func:`load_multilabel_annotations`): the training images then train on
    exactly the annotated positives and negatives (``single_positive=False``
    for several positives per image), and the validation and test images
    are evaluated on their annotated entries (``SPMLAveragePrecision``'s
    ``spml/mAP_annotated``; ``val_labels='full'`` counts every class not
    listed as positive as a negative instead).

    Args:
        data_root (str): Root of the annotation files and the images.
            Defaults to ``''``.
        train_ann_file (str): Annotations of the training images, relative to
            ``data_root``. Defaults to ``'train.json'``.
        test_ann_file (str): Annotations of the test images, relative to
            ``data_root``. Defaults to ``'test.json'``.
        data_prefix (str): Image folder relative to ``data_root``. Defaults
            to ``''``.
        **kwargs: The other arguments of :class:`SPMLDataset` (``split``,
            ``val_frac=0.2``, ``split_seed=1200``, ``observe_seed=1200``,
            ``full_labels=False``, ``classes``, ``val_labels``,
            ``val_full_subset``, ``pipeline``...).

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLMultiLabelDataset', data_root='data/custom',
        ...     train_ann_file='train.json', test_ann_file='test.json',
        ...     data_prefix='images', split='train', pipeline=train_pipeline))
    """

    def __init__(self,
                 data_root: str = '',
                 train_ann_file: str = 'train.json',
                 test_ann_file: str = 'test.json',
                 **kwargs):
        self.ann_files = dict(train=train_ann_file, val=test_ann_file)
        super().__init__(data_root=data_root, **kwargs)

    def parse_split(self, official_split: str) -> ParsedSplit:
        ann_file = osp.join(self.data_root, self.ann_files[official_split])
        classes = (None if self._classes_arg is None else
                   self.metainfo['classes'])
        return load_multilabel_annotations(ann_file, classes)
