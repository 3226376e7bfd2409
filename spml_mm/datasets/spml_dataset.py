import os.path as osp
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
from mmengine.logging import print_log
from mmpretrain.datasets import MultiLabelDataset
from mmpretrain.datasets.transforms import PackInputs
from mmpretrain.registry import DATASETS

from .protocol import (OBSERVE_RULES, observe_labels, observe_uniform,
                       split_train_val)
from .validation import DatasetError, label_problems


#: The first bytes of every ``.npy`` file.
NPY_MAGIC = b'\x93NUMPY'


def _load_matrix(path: str) -> np.ndarray:
    """``np.load`` of an interchange file; any failure names the file."""
    with open(path, 'rb') as f:
        head = f.read(len(NPY_MAGIC))
    if head != NPY_MAGIC:
        # np.load takes any other file for a pickle
        raise ValueError(
            f'{path} is not a .npy file (it starts with {head!r}, not '
            f'{NPY_MAGIC!r}; a text file or a file of another format saved '
            'under this name?); write it with np.save(path, array).')
    try:
        return np.load(path)
    except ValueError as err:
        if 'allow_pickle' not in str(err):
            raise ValueError(f'{path}: cannot be read ({err})') from None
        raise ValueError(
            f'{path} holds an object array (pickled Python objects), which '
            'is not loaded because unpickling can run code; save the image '
            'paths as a string array, e.g. np.save(path, np.array(paths, '
            'dtype=str)).') from None
    except (OSError, EOFError) as err:
        raise ValueError(f'{path}: cannot be read ({err}); the file is '
                         'truncated or not a .npy file.') from None


#: How each protocol split maps onto an official split of the dataset.
OFFICIAL_SPLIT = dict(train='train', val='train', test='val')
#: The labels the validation images can carry (``val_labels``).
VAL_LABELS = ('full', 'observed')


@DATASETS.register_module()
class SPMLDataset(MultiLabelDataset):
    """A multi-label dataset under the single-positive protocol.

    The protocol and the interchange format are described in
    ``docs/methods/protocol.md`` ("The protocol").

    Reads the community interchange format from ``data_root``:
    ``formatted_{train,val}_images.npy`` (image paths relative to
    ``data_root/data_prefix``), ``formatted_{train,val}_labels.npy`` (N x C,
    0/1) and, when present, ``formatted_{train,val}_labels_obs.npy``
    (-1/0/+1); ``classes.txt`` (one name per line) is read when present.

    The label matrices are validated when the dataset is built and every
    problem is reported with its row and image: labels other than 0/1,
    observed labels other than -1/0/+1, training rows without exactly one
    observed positive (at least one with ``single_positive=False``),
    observations that contradict the full labels
    (:func:`~spml_mm.datasets.validation.label_problems`).

    The official ``train`` split is divided by :func:`split_train_val` into the
    protocol's ``train`` and ``val`` splits; the official ``val`` split is the
    protocol's ``test`` split. Observed labels come from
    ``formatted_train_labels_obs.npy`` or, without it, from
    :func:`observe_uniform` over the whole official train split with
    ``num_pos`` and ``num_neg``. An image without any positive label stays
    in the splits (so the split and the observations of the other images
    are the community code's); it is evaluated as a validation or test image
    and left out of training, where it cannot carry an observed positive.

    Training samples carry ``gt_label`` (the observed positives),
    ``gt_label_neg`` (the observed negatives, empty in the single-positive
    protocol), ``gt_label_full`` (the true labels, for diagnostics only) and
    ``sample_idx``. Validation and test samples carry the true labels as
    ``gt_label``, every other class a negative; a sample whose labels are
    partly unknown carries its known positives as ``gt_label`` and its known
    negatives as ``gt_label_neg`` (every other class unknown), which
    :class:`~spml_mm.evaluation.SPMLAveragePrecision` reads. Such samples
    are the validation images under ``val_labels='observed'`` and the
    images of partial annotations (:meth:`annotations_are_partial`), test
    images included. A pipeline whose ``PackInputs`` drops ``gt_label_neg``
    while the split observes negatives, or evaluates partly unknown labels,
    is refused: list it in ``algorithm_keys``.

    Subclasses that read other layouts override :meth:`load_split_matrices`
    and keep the protocol.

    Args:
        data_root (str): Folder of the interchange files.
        split (str): ``'train'``, ``'val'`` or ``'test'``. Defaults to
            ``'train'``.
        data_prefix (str): Image folder relative to ``data_root``.
            Defaults to ``''``.
        val_frac (float): Share of the official train split held out for
            validation. Defaults to 0.2.
        split_seed (int): Seed of the train/val split. Defaults to 1200.
        observe_seed (int): Seed of :func:`observe_uniform`. Defaults to 1200.
        num_pos (int): Positives per image that :func:`observe_uniform`
            observes when no ``labels_obs`` file is stored, >= 1 or -1 (all);
            more than one needs ``single_positive=False``. Defaults to 1.
        num_neg (int): Negatives per image that :func:`observe_uniform`
            observes likewise, >= 0 or -1 (all). The positives it observes
            do not depend on it. Defaults to 0.
        full_labels (bool): Train on the true labels instead of the observed
            ones (the full-label upper bound). Defaults to False.
        classes (str | Sequence[str], optional): Class names or a file of
            them; defaults to ``classes.txt`` or ``class_<k>``.
        single_positive (bool): Require exactly one observed positive per
            training image (the single-positive protocol); False accepts
            several. Defaults to True.
        val_labels (str, optional): The labels of the ``val`` split's images:
            ``'full'`` (their true labels) or ``'observed'`` (the labels the
            training images are observed with: the same ``labels_obs`` file,
            partial annotations or :func:`observe_uniform` draw with
            ``num_pos``, ``num_neg`` and ``observe_seed``; unobserved
            classes unknown). None: ``'observed'`` for partial annotations,
            else ``'full'``. Other splits ignore it. Defaults to None.
        val_full_subset (int | Sequence[str], optional): Validation images
            that are fully labelled: a number of them drawn at random
            (``val_subset_seed``; a smaller number draws a subset of a larger
            one) or their paths (the image list's entries, or any trailing
            part of them that names one image). With ``val_labels='full'``
            the ``val`` split is these images alone; with ``'observed'`` they
            carry their true labels and the other images their observed ones.
            Defaults to None (every image).
        val_subset_seed (int): Seed of the draw of ``val_full_subset``.
            Defaults to 1200.
        observe (str): How the observed positives are chosen among an
            image's labels (:func:`~spml_mm.datasets.protocol.observe_labels`):
            ``'uniform'`` (the papers' protocol), ``'commonest'``,
            ``'rarest'`` (the class most / least frequent in the official
            train split) or ``'largest'`` (the label of highest salience in
            ``formatted_train_salience.npy``, e.g. object area). Another
            rule than ``'uniform'`` draws from the full labels even where a
            ``labels_obs`` file is stored; annotations that are themselves
            the observation are refused. Defaults to ``'uniform'``.
        **kwargs: Other arguments of :class:`mmpretrain.datasets.BaseDataset`
            (``pipeline``, ``test_mode``, ``indices``...).

    Example:
        >>> train_dataloader = dict(dataset=dict(
        ...     type='SPMLDataset', data_root='data/voc', split='train',
        ...     data_prefix='VOCdevkit/VOC2012', pipeline=train_pipeline))
        >>> # partial labels: one positive and two negatives per image
        >>> train_pipeline = [
        ...     dict(type='LoadImageFromFile'),
        ...     dict(type='PackInputs',
        ...          algorithm_keys=('gt_label_full', 'gt_label_neg'))]
        >>> dataset = dict(type='SPMLDataset', data_root='data/voc',
        ...                num_neg=2, pipeline=train_pipeline)
        >>> # validate on the observed labels, 100 images fully labelled
        >>> val_dataloader = dict(dataset=dict(
        ...     type='SPMLDataset', data_root='data/voc', split='val',
        ...     val_labels='observed', val_full_subset=100,
        ...     pipeline=[dict(type='LoadImageFromFile'),
        ...               dict(type='PackInputs',
        ...                    algorithm_keys=('gt_label_neg', ))]))
    """

    SPLITS = tuple(OFFICIAL_SPLIT)
    #: How to produce the files :meth:`load_split_matrices` reads.
    PREPARE_HINT = ('run `python tools/prepare_spml.py` for a real dataset or '
                    '`python tools/make_demo_data.py` for the demo dataset')

    def __init__(self,
                 data_root: str,
                 split: str = 'train',
                 data_prefix: str = '',
                 val_frac: float = 0.2,
                 split_seed: int = 1200,
                 observe_seed: int = 1200,
                 num_pos: int = 1,
                 num_neg: int = 0,
                 full_labels: bool = False,
                 classes: Union[str, Sequence[str], None] = None,
                 single_positive: bool = True,
                 val_labels: Optional[str] = None,
                 val_full_subset: Union[int, Sequence[str], None] = None,
                 val_subset_seed: int = 1200,
                 observe: str = 'uniform',
                 **kwargs):
        if observe not in OBSERVE_RULES:
            raise ValueError(f'observe must be one of {OBSERVE_RULES}, got '
                             f'{observe!r}')
        if split not in self.SPLITS:
            raise ValueError(f'split must be one of {self.SPLITS}, got '
                             f'{split!r}')
        if val_labels not in (None, *VAL_LABELS):
            raise ValueError(f'val_labels must be None or one of '
                             f'{VAL_LABELS}, got {val_labels!r}')
        if isinstance(val_full_subset, (str, bool)) or isinstance(
                val_full_subset, (int, np.integer)) and val_full_subset < 1:
            raise ValueError(
                'val_full_subset must be a number of images >= 1 or a list '
                f'of image paths, got {val_full_subset!r}')
        if num_pos != 1 and single_positive:
            raise ValueError(
                f'num_pos={num_pos} observes several positives per image; '
                'set single_positive=False to accept them.')
        self.split = split
        self.val_frac = val_frac
        self.split_seed = split_seed
        self.observe_seed = observe_seed
        self.num_pos = num_pos
        self.num_neg = num_neg
        self.full_labels = full_labels
        self.single_positive = single_positive
        self.val_labels = val_labels
        self.val_full_subset = val_full_subset
        self.val_subset_seed = val_subset_seed
        self.observe = observe
        self._classes_arg = classes
        super().__init__(
            ann_file='',
            data_root=data_root,
            data_prefix=data_prefix,
            classes=classes,
            **kwargs)

    def _interchange_path(self, name: str, must_exist: bool = True) -> str:
        path = osp.join(self.data_root, name)
        if must_exist and not osp.isfile(path):
            raise FileNotFoundError(
                f'{type(self).__name__}: expected {path} (interchange format, '
                f'see docs/methods/protocol.md); {self.PREPARE_HINT}.')
        return path

    def load_split_matrices(
        self, official_split: str
    ) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """Read one official split.

        Args:
            official_split (str): ``'train'`` or ``'val'``.

        Returns:
            tuple: Image paths (N,), labels (N, C) in 0/1, and the observed
            labels (N, C) in -1/0/+1 or None when not stored.
        """
        images = _load_matrix(
            self._interchange_path(f'formatted_{official_split}_images.npy'))
        labels = _load_matrix(
            self._interchange_path(f'formatted_{official_split}_labels.npy'))
        obs_path = self._interchange_path(
            f'formatted_{official_split}_labels_obs.npy', must_exist=False)
        observed = _load_matrix(obs_path) if osp.isfile(obs_path) else None
        return images, labels, observed

    def _load_class_names(self, num_classes: int) -> List[str]:
        path = osp.join(self.data_root, 'classes.txt')
        if self._classes_arg is not None:
            names = list(self.metainfo['classes'])
        elif osp.isfile(path):
            with open(path) as f:
                names = [line.strip() for line in f if line.strip()]
        else:
            names = [f'class_{k}' for k in range(num_classes)]
        if len(names) != num_classes:
            raise ValueError(
                f'{type(self).__name__}: {len(names)} class names but the '
                f'label matrix of {self.data_root} has {num_classes} columns; '
                'fix `classes` (or classes.txt) to match the labels.')
        return names

    def annotations_are_partial(self) -> bool:
        """Whether the split just read is partial annotations: labels that
        are the known positives, with known negatives, rather than full
        labels. False for the interchange format, whose ``labels_obs`` files
        are drawn from full labels; :class:`SPMLLayoutDataset` says True for
        annotations with known negatives."""
        return False

    def load_data_list(self) -> List[dict]:
        """Apply the protocol to the official split behind ``self.split``."""
        official = OFFICIAL_SPLIT[self.split]
        images, labels, observed = self.load_split_matrices(official)
        labels = np.asarray(labels)
        if labels.ndim != 2 or len(labels) != len(images):
            raise ValueError(
                f'{type(self).__name__}: {len(images)} images but labels of '
                f'shape {labels.shape} in the official {official} split of '
                f'{self.data_root}; the matrices must be (N,) and (N, C).')
        self._metainfo['classes'] = tuple(
            self._load_class_names(labels.shape[1]))
        # named by SPMLAveragePrecision's messages
        self._metainfo['split'] = self.split
        partial = self.annotations_are_partial()

        prefix = self.data_prefix['img_path']
        where = (f'{type(self).__name__} ({self.data_root}, official '
                 f'{official} split)')
        if official == 'train':
            if self.observe != 'uniform':
                if partial:
                    raise ValueError(
                        f'{type(self).__name__}: observe={self.observe!r} '
                        'draws from full labels, but these annotations are '
                        'themselves the observation.')
                observed = None  # drawn again by the rule
            if observed is None:
                # the observations are drawn from the labels: check them
                # first, so that a bad value is reported with its row
                self._raise_label_problems(where, images, labels,
                                           np.arange(len(images)), None,
                                           prefix, self.single_positive)
                observed = observe_uniform(
                    labels, self.num_pos, self.num_neg, self.observe_seed
                ) if self.observe == 'uniform' else observe_labels(
                    labels, self.observe, self.num_pos, self.num_neg,
                    self.observe_seed, self._salience(len(images)))
            elif observed.shape != labels.shape:
                obs_file = self._interchange_path(
                    f'formatted_{official}_labels_obs.npy', must_exist=False)
                raise ValueError(
                    f'{type(self).__name__}: {obs_file} holds observed '
                    f'labels of shape {observed.shape}, which do not match '
                    f'the labels {labels.shape} of formatted_{official}_'
                    'labels.npy: it is stale (left from another version of '
                    'the data). Write it again with the tool that made the '
                    'data (tools/prepare_spml.py, tools/make_demo_data.py), '
                    'or remove it to draw the observations from the labels '
                    '(num_pos, observe_seed).')
            train_idx, val_idx = split_train_val(
                len(images), self.val_frac, self.split_seed)
            keep = train_idx if self.split == 'train' else val_idx
        else:
            keep = np.arange(len(images))

        training = self.split == 'train'
        observed_used = training and not self.full_labels
        # evaluation rows that carry their true labels (the others carry
        # their observed labels)
        full_rows = np.full(len(keep), not partial)
        eval_note = ''
        if self.split == 'val':
            keep, full_rows, eval_note = self._val_rows(
                images, keep, prefix, partial)
        eval_partial = not training and not full_rows.all()
        self._raise_label_problems(
            where, images, labels, keep,
            observed if observed_used or eval_partial else None, prefix,
            self.single_positive and training)
        if training:
            keep = self._without_positive_left_out(images, labels, keep)
        if len(keep) == 0:
            raise ValueError(
                f'{type(self).__name__}: the {self.split} split of '
                f'{self.data_root} is empty; check the label files and '
                f'val_frac={self.val_frac}.')
        data_list = []
        for i, full_row in zip(keep, full_rows):
            full = np.flatnonzero(labels[i])
            info = dict(img_path=osp.join(prefix, str(images[i])),
                        gt_label=full)
            if observed_used or eval_partial and not full_row:
                info.update(gt_label=np.flatnonzero(observed[i] == 1),
                            gt_label_neg=np.flatnonzero(observed[i] == -1))
            elif eval_partial:  # a fully labelled row among partial ones
                info['gt_label_neg'] = np.flatnonzero(labels[i] == 0)
            if training:
                info['gt_label_full'] = full
            data_list.append(info)
        if observed_used and (observed[keep] == -1).any():
            self._check_negatives_are_packed('the images observe negatives')
        if eval_partial:
            self._check_negatives_are_packed(
                'the images are evaluated on partly unknown labels, whose '
                'known negatives (gt_label_neg) tell them from full labels')

        kept = labels[keep]
        seen = ''
        if observed_used or eval_partial:
            rows = keep if observed_used else keep[~full_rows]
            drawn = (f' ({self.observe} draw)' if self.observe != 'uniform'
                     and observed_used else '')
            seen = (f', {"evaluated on " * eval_partial}observed{drawn} '
                    f'{(observed[rows] == 1).sum(1).mean():.2f} positives '
                    f'and {(observed[rows] == -1).sum(1).mean():.2f} '
                    'negatives')
            if eval_partial:
                seen += (f' per image ({len(rows)} images; '
                         f'{int(full_rows.sum())} fully labelled)')
        print_log(
            f'{type(self).__name__} {self.split}: {len(keep)} images, '
            f'{kept.shape[1]} classes, {kept.sum(1).mean():.2f} positives per '
            f'image{seen}{eval_note} ({self.data_root}, official {official} '
            'split)',
            logger='current')
        return data_list

    def _salience(self, num_images: int) -> Optional[np.ndarray]:
        """``formatted_train_salience.npy`` (N x C), which
        ``observe='largest'`` reads; None for the other rules."""
        if self.observe != 'largest':
            return None
        salience = _load_matrix(
            self._interchange_path('formatted_train_salience.npy'))
        if len(salience) != num_images:
            raise ValueError(
                f'{type(self).__name__}: formatted_train_salience.npy has '
                f'{len(salience)} rows for {num_images} training images.')
        return salience

    def _val_rows(self, images: np.ndarray, rows: np.ndarray, prefix: str,
                  partial: bool) -> Tuple[np.ndarray, np.ndarray, str]:
        """The validation rows, which of them carry their true labels
        (``val_labels``, ``val_full_subset``), and a note for the log."""
        mode = self.val_labels or ('observed' if partial else 'full')
        subset = self.val_full_subset
        chosen = np.full(len(rows), subset is None)
        note = ''
        if subset is not None:
            chosen = self._full_subset(
                [osp.join(prefix, str(images[i])) for i in rows])
            drawn = (f', drawn with seed {self.val_subset_seed}'
                     if isinstance(subset, (int, np.integer)) else '')
            note = (f'; val_full_subset: {int(chosen.sum())} fully labelled '
                    f'images{drawn}')
        if mode == 'full':
            return rows[chosen], np.ones(int(chosen.sum()), bool), note
        return rows, chosen & (subset is not None), note

    def _full_subset(self, paths: List[str]) -> np.ndarray:
        """Which of the validation images ``paths`` ``val_full_subset``
        names (a mask)."""
        subset = self.val_full_subset
        chosen = np.zeros(len(paths), bool)
        if isinstance(subset, (int, np.integer)):
            if subset > len(paths):
                raise ValueError(
                    f'{type(self).__name__}: val_full_subset={subset} but '
                    f'the val split has {len(paths)} images.')
            rng = np.random.RandomState(self.val_subset_seed)
            chosen[rng.permutation(len(paths))[:subset]] = True
            return chosen
        paths = [osp.normpath(p) for p in paths]
        problems = []
        for name in subset:
            name = osp.normpath(str(name))
            found = [k for k, p in enumerate(paths)
                     if p == name or p.endswith(osp.sep + name)]
            if len(found) != 1:
                problems.append(
                    f'{name!r} names {len(found)} validation images' +
                    (f' ({", ".join(paths[k] for k in found[:3])})'
                     if found else ''))
            chosen[found] = True
        if problems:
            raise ValueError(
                f'{type(self).__name__}: val_full_subset must name one '
                'validation image per entry: ' + '; '.join(problems[:10]))
        return chosen

    def _raise_label_problems(self, where: str, images: np.ndarray,
                              labels: np.ndarray, rows: np.ndarray,
                              observed: Optional[np.ndarray], prefix: str,
                              single_positive: bool) -> None:
        """Raise :class:`DatasetError` listing every label problem of
        ``rows`` with its row and image."""
        problems = label_problems(where, images, labels, rows, observed,
                                  single_positive)
        if problems:
            raise DatasetError(
                f'{type(self).__name__} {self.split} split', problems,
                [osp.join(prefix, str(images[i])) for i in rows])

    def _without_positive_left_out(self, images: np.ndarray,
                                   labels: np.ndarray,
                                   rows: np.ndarray) -> np.ndarray:
        """``rows`` without the images that have no positive label, which
        cannot carry an observed positive; the log counts them."""
        empty = ~labels[rows].any(1)
        if empty.any():
            print_log(
                f'{type(self).__name__} {self.split}: {int(empty.sum())} '
                'images without any positive label left out of training '
                f'(first: {images[rows[empty][0]]})',
                logger='current')
        return rows[~empty]

    def _check_negatives_are_packed(self, why: str) -> None:
        """Refuse a ``PackInputs`` that would drop ``gt_label_neg``."""
        for transform in getattr(self.pipeline, 'transforms', []):
            if isinstance(transform, PackInputs) and \
                    'gt_label_neg' not in transform.algorithm_keys:
                keys = ('gt_label_full', 'gt_label_neg') if \
                    self.split == 'train' else ('gt_label_neg', )
                raise ValueError(
                    f'{type(self).__name__} {self.split} split: {why}, but '
                    'PackInputs drops them; add '
                    "'gt_label_neg' to its algorithm_keys, e.g. "
                    f"dict(type='PackInputs', algorithm_keys={keys}).")
