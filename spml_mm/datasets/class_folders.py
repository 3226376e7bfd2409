"""Single-label class folders (MMPretrain's ``CustomDataset`` layout) as
real single positives.

Each image of ``<root>/<class>/<image>`` carries one label, the folder it
sits in, chosen by whoever filed it: the observed positive, with every other
class unknown (not a protocol draw). The test split is a multi-label
annotation file of MMPretrain's ``MultiLabelDataset`` format when the user
has one, else the test folder's single labels (evaluated as observed).
docs/user_guides/custom_and_partial_data.md ("Class folders").
"""
import os
import os.path as osp
from typing import Optional, Sequence, Tuple

import numpy as np
from mmpretrain.registry import DATASETS

from .layout import ParsedSplit, SPMLLayoutDataset, require_path
from .multilabel import load_multilabel_annotations

#: Image file endings read from a class folder (MMPretrain's
#: ``CustomDataset`` defaults, case-insensitive).
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.ppm', '.bmp', '.pgm', '.tif',
                    '.tiff', '.webp')

CLASS_FOLDER_LAYOUT = """\
ROOT/
  train/<class>/<image>       one folder per class: the image's one label
  test.json                   (optional) multi-label annotations of the test
                              images in MMPretrain's MultiLabelDataset format,
                              img_path relative to ROOT/test
  test/<image> or test/<class>/<image>  (without test.json: single labels)"""


def single_labels(indices: Sequence[int], num_classes: int
                  ) -> Tuple[np.ndarray, np.ndarray]:
    """Full labels (one-hot, float64) and observed labels (+1 at the label,
    0 elsewhere) of single-label images."""
    labels = np.zeros((len(indices), num_classes), dtype=np.float64)
    labels[np.arange(len(indices)), np.asarray(indices, dtype=np.int64)] = 1
    return labels, labels.copy()


def read_class_folders(
        folder: str,
        classes: Optional[Sequence[str]] = None,
        what: str = 'class folders',
        layout: str = CLASS_FOLDER_LAYOUT
) -> Tuple[np.ndarray, np.ndarray, Tuple[str, ...]]:
    """Images of ``folder/<class>/<image>`` and their class indices.

    Classes are the sub-folders in sorted order, as MMPretrain's
    ``CustomDataset`` numbers them, unless ``classes`` names them (then a
    folder not among them is refused). Images are sorted by path.

    Args:
        folder (str): The folder of class folders.
        classes (Sequence[str], optional): The class names, in label order.
        what (str): The dataset's name in messages.
        layout (str): The expected layout, shown when ``folder`` is absent.

    Returns:
        tuple: Image paths relative to ``folder`` (N,), class indices (N,),
        the class names.
    """
    require_path(folder, what, layout, folder=True)
    found = sorted(entry.name for entry in os.scandir(folder)
                   if entry.is_dir())
    if classes is None:
        classes = found
    classes = tuple(classes)
    index = {name: k for k, name in enumerate(classes)}
    unknown = [name for name in found if name not in index]
    if unknown:
        raise ValueError(
            f'{what}: {folder} holds folders that are not classes: '
            f'{unknown[:5]}{" ..." if len(unknown) > 5 else ""} (classes: '
            f'{len(classes)} given).')
    if not classes:
        raise ValueError(f'{what}: {folder} holds no class folder; expected '
                         f'layout:\n{layout}')
    paths, labels = [], []
    for name in found:
        for base, _, files in sorted(os.walk(osp.join(folder, name))):
            for file in sorted(files):
                if file.lower().endswith(IMAGE_EXTENSIONS):
                    paths.append(
                        osp.relpath(osp.join(base, file), folder))
                    labels.append(index[name])
    order = np.argsort(np.array(paths, dtype=str), kind='stable')
    return (np.array(paths, dtype=str)[order],
            np.array(labels, dtype=np.int64)[order], classes)


def load_class_folder_split(root: str,
                            split: str,
                            train_prefix: str = 'train',
                            test_prefix: str = 'test',
                            test_ann_file: Optional[str] = 'test.json',
                            classes: Optional[Sequence[str]] = None
                            ) -> ParsedSplit:
    """Read one official split of a class-folder dataset.

    ``'train'``: ``root/train_prefix/<class>/<image>``, each image observing
    its folder's class as its one positive (every other class unknown).
    ``'val'`` (the protocol's test split): ``root/test_ann_file`` when it
    exists (multi-label annotations, its classes those of the training
    folders in the same order), else the class folders under
    ``root/test_prefix`` with their single labels.

    Args:
        root (str): The dataset root.
        split (str): ``'train'`` or ``'val'``.
        train_prefix (str): Folder of the training class folders.
        test_prefix (str): Folder of the test images.
        test_ann_file (str, optional): Multi-label annotations of the test
            images, relative to ``root``; img_path relative to
            ``root/test_prefix``.
        classes (Sequence[str], optional): Class names in label order;
            default: the training folders, sorted.

    Returns:
        ParsedSplit: The split; ``observed`` for single labels, None for
        the multi-label annotations (their full labels).
    """
    if classes is None:
        _, _, classes = read_class_folders(osp.join(root, train_prefix))
    if split == 'train':
        paths, indices, classes = read_class_folders(
            osp.join(root, train_prefix), classes)
        labels, observed = single_labels(indices, len(classes))
        return ParsedSplit(paths, labels, classes, train_prefix,
                           {}, observed)
    if test_ann_file and osp.isfile(osp.join(root, test_ann_file)):
        parsed = load_multilabel_annotations(
            osp.join(root, test_ann_file), classes)
        return parsed._replace(image_dir=test_prefix)
    paths, indices, classes = read_class_folders(
        osp.join(root, test_prefix), classes, 'class-folder test split')
    labels, observed = single_labels(indices, len(classes))
    return ParsedSplit(paths, labels, classes, test_prefix, {}, observed)


@DATASETS.register_module()
class SPMLClassFolderDataset(SPMLLayoutDataset):
    """Class folders (``<root>/train/<class>/<image>``, MMPretrain's
    ``CustomDataset`` layout) trained as single positives.

    Each training image observes the class of its folder as its one
    positive, every other class unknown: the label a person chose, not a
    protocol draw (:func:`load_class_folder_split`). The protocol's
    train/val split holds out ``val_frac`` of the images, which validate on
    these observed labels (``spml/mAP_observed``). The test split reads the
    multi-label annotation file ``test_ann_file`` (MMPretrain's
    ``MultiLabelDataset`` format) when it exists and is evaluated on its
    full labels (``spml/mAP``), else the single labels of
    ``test/<class>/<image>``.

    Args:
        data_root (str): The dataset root.
        train_prefix (str): Folder of the class folders. Defaults to
            ``'train'``.
        test_prefix (str): Folder of the test images (the annotation file's
            ``img_path`` is relative to it). Defaults to ``'test'``.
        test_ann_file (str, optional): Multi-label annotations of the test
            images, relative to ``data_root``. Defaults to ``'test.json'``.
        **kwargs: Other arguments of :class:`SPMLDataset`.

    Example:
        >>> dataset = dict(type='SPMLClassFolderDataset',
        ...                data_root='data/my_folders', split='train')
    """

    def __init__(self,
                 data_root: str = '',
                 train_prefix: str = 'train',
                 test_prefix: str = 'test',
                 test_ann_file: Optional[str] = 'test.json',
                 **kwargs):
        self.prefixes = (train_prefix, test_prefix, test_ann_file)
        super().__init__(data_root=data_root, **kwargs)

    def parse_split(self, official_split: str) -> ParsedSplit:
        classes = (None if self._classes_arg is None else
                   self.metainfo['classes'])
        return load_class_folder_split(self.data_root, official_split,
                                       *self.prefixes, classes=classes)
