"""Pieces shared by the readers of official annotation layouts.

Each dataset module (``voc.py``, ``coco.py``, ``nuswide.py``, ``cub.py``,
``multilabel.py``) turns one official split into a :class:`ParsedSplit` and
registers a dataset class on :class:`SPMLLayoutDataset`, which hands the
parsed matrices to the protocol code of :class:`SPMLDataset`.
"""
import os.path as osp
from typing import (Callable, Dict, Iterator, List, NamedTuple, Optional,
                    Sequence, Tuple)

import numpy as np
from mmengine.logging import print_log

from .spml_dataset import SPMLDataset


class ParsedSplit(NamedTuple):
    """One official split read from its annotation files.

    Attributes:
        images (np.ndarray): Image paths (N,), relative to ``image_dir``.
        labels (np.ndarray): Full labels (N, C), float64 in 0/1.
        classes (tuple[str] | None): Class names in column order.
        image_dir (str): Image folder relative to the dataset root.
        dropped (dict[str, int]): Images left out, counted per reason.
        observed (np.ndarray, optional): Observed labels (N, C) in -1/0/+1
            when the annotations are themselves partial; None lets the
            protocol observe the labels.
        notes (tuple[str]): What the reader found, for the log and
            ``tools/check_dataset.py`` (e.g. the ReaL rows matched).
    """
    images: np.ndarray
    labels: np.ndarray
    classes: Optional[Tuple[str, ...]]
    image_dir: str
    dropped: Dict[str, int]
    observed: Optional[np.ndarray] = None
    notes: Tuple[str, ...] = ()


def require_path(path: str,
                 dataset: str,
                 layout: str,
                 folder: bool = False) -> str:
    """Return ``path``, or fail naming it and the expected layout.

    Args:
        path (str): File or folder that must exist.
        dataset (str): Dataset name for the message.
        layout (str): The expected folder tree, shown in the message.
        folder (bool): Whether ``path`` is a folder. Defaults to False.
    """
    if not (osp.isdir(path) if folder else osp.isfile(path)):
        kind = 'folder' if folder else 'file'
        raise FileNotFoundError(
            f'{dataset}: {kind} {path} not found. Expected layout:\n{layout}')
    return path


def line_error(path: str, line: int, message: str) -> ValueError:
    """A ``ValueError`` that names the file and the offending line."""
    return ValueError(f'{path}, line {line}: {message}')


def read_rows(path: str) -> Iterator[Tuple[int, List[str]]]:
    """Yield ``(line number, whitespace-separated fields)`` of non-blank lines.
    """
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if fields:
                yield number, fields


class SPMLLayoutDataset(SPMLDataset):
    """Base of the datasets that read an annotation layout directly.

    Subclasses name the reader of their layout, :attr:`read_split`, or
    implement :meth:`parse_split`; image paths are joined with the parsed
    ``image_dir`` (relative to ``data_root``), class names come from the
    annotations unless ``classes`` is given, and the protocol is
    :class:`SPMLDataset`'s. Arguments are those of :class:`SPMLDataset`.
    """

    #: The reader of one official split, ``(data_root, split) ->
    #: ParsedSplit`` (e.g. :func:`~spml_mm.datasets.voc.load_voc_split`).
    read_split: Callable[[str, str], ParsedSplit]
    _parsed_classes: Optional[Sequence[str]] = None
    _parsed_partial: bool = False
    #: The reader's notes on the official split just read
    #: (:attr:`ParsedSplit.notes`), which ``tools/check_dataset.py`` prints.
    layout_notes: Tuple[str, ...] = ()

    def parse_split(self, official_split: str) -> ParsedSplit:
        """Read the official ``'train'`` or ``'val'`` split."""
        return self.read_split(self.data_root, official_split)

    def load_split_matrices(
        self, official_split: str
    ) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        parsed = self.parse_split(official_split)
        self._parsed_classes = parsed.classes
        self._parsed_partial = parsed.observed is not None
        self.layout_notes = tuple(parsed.notes)
        for note in parsed.notes:
            print_log(f'{type(self).__name__}: {note}', logger='current')
        for reason, count in parsed.dropped.items():
            if count:
                print_log(
                    f'{type(self).__name__}: {count} images of the official '
                    f'{official_split} split dropped ({reason})',
                    logger='current')
        images = np.array(
            [osp.join(parsed.image_dir, path) for path in parsed.images],
            dtype=str)
        return images, parsed.labels, parsed.observed

    def annotations_are_partial(self) -> bool:
        return self._parsed_partial

    def _load_class_names(self, num_classes: int) -> List[str]:
        if self._classes_arg is None and self._parsed_classes is not None:
            return list(self._parsed_classes)
        return super()._load_class_names(num_classes)
