"""Checks of a dataset's labels and image files that report every problem.

The datasets run :func:`label_problems` when they are built;
``SPMLDatasetCheckHook`` runs :func:`index_label_problems`,
:func:`classes_without_positive`, :func:`duplicate_findings`,
:func:`shared_image_findings` and :func:`image_problems` before training
or testing; ``tools/check_dataset.py CONFIG`` runs all of them on every
split, with image decoding under ``--decode``. A problem stops a run; a
warning is logged (and printed by the tool) and the run goes on.
"""
import itertools
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

#: Problems shown in an exception message; the rest are counted.
MAX_SHOWN = 20


class DatasetError(ValueError):
    """A dataset has problems; the message lists them with file and row.

    Attributes:
        problems (list[str]): Every problem found, one line each.
        image_paths (list[str] | None): The images of the dataset that
            failed, so that a checker can go on with the files.
    """

    def __init__(self,
                 what: str,
                 problems: Sequence[str],
                 image_paths: Optional[Sequence[str]] = None):
        self.problems = list(problems)
        self.image_paths = image_paths
        shown = '\n  '.join(self.problems[:MAX_SHOWN])
        more = len(self.problems) - MAX_SHOWN
        tail = (f'\n  ... and {more} more (python tools/check_dataset.py '
                'CONFIG lists every one)' if more > 0 else '')
        super().__init__(
            f'{what}: {len(self.problems)} problem(s):\n  {shown}{tail}')


def _values(row: np.ndarray) -> str:
    return ', '.join(f'{v:g}' for v in np.unique(row).tolist())


def label_problems(where: str,
                   images: np.ndarray,
                   labels: np.ndarray,
                   rows: np.ndarray,
                   observed: Optional[np.ndarray] = None,
                   single_positive: bool = True) -> List[str]:
    """Every problem of the label matrices in ``rows``.

    Checks that full labels are 0/1; for observed labels (training rows)
    that they are -1/0/+1, that each row observes exactly one positive
    (``single_positive``) or at least one, and that no observation
    contradicts the full labels (an observed positive where the label is 0,
    an observed negative where it is 1). A row without any positive is no
    problem here: the datasets keep it for evaluation and leave it out of
    training (it cannot carry an observed positive).

    Args:
        where (str): Names the source, e.g. ``'SPMLDataset (data/voc,
            official train split)'``; each problem reads ``<where> row <i>
            (<image>): ...``.
        images (np.ndarray): Image paths (N,).
        labels (np.ndarray): Full labels (N, C).
        rows (np.ndarray): The rows to check.
        observed (np.ndarray, optional): Observed labels (N, C) of training
            rows.
        single_positive (bool): Require exactly one observed positive per
            row; False accepts several (partial labels). Defaults to True.

    Returns:
        list[str]: One line per problem, in row order.
    """
    problems = []
    full = labels[rows]
    bad_full = ~np.isin(full, (0, 1)).all(1)
    if observed is None:
        flagged = bad_full
    else:
        obs = observed[rows]
        bad_obs = ~np.isin(obs, (-1, 0, 1)).all(1)
        positives = (obs == 1).sum(1)
        contradicts = ((obs == 1) & (full == 0)) | ((obs == -1) & (full == 1))
        # a row without any positive cannot observe one
        unobserved = (positives == 0) & full.any(1)
        flagged = (bad_full | bad_obs | unobserved |
                   (positives > 1) & single_positive | contradicts.any(1))
    # a Python loop over the flagged rows only: a clean split costs a few
    # vectorised passes
    for k in np.flatnonzero(flagged):
        i = rows[k]
        row = f'{where} row {i} ({images[i]})'
        if bad_full[k]:
            problems.append(f'{row}: labels hold {_values(labels[i])}; they '
                            'must be 0/1')
        if observed is None:
            continue
        if bad_obs[k]:
            problems.append(f'{row}: observed labels hold '
                            f'{_values(observed[i])}; they must be -1/0/1')
        if unobserved[k]:
            problems.append(f'{row}: no observed positive; every training '
                            'image needs at least one')
        elif positives[k] > 1 and single_positive:
            problems.append(
                f'{row}: {positives[k]} observed positives (classes '
                f'{np.flatnonzero(observed[i] == 1).tolist()}); the single-'
                'positive protocol observes one (single_positive=False '
                'accepts several)')
        for c in np.flatnonzero(contradicts[k]):
            problems.append(
                f'{row}: class {c} is observed {int(observed[i, c]):+d} but '
                f'its full label is {labels[i, c]:g}')
    return problems


def index_label_problems(where: str, infos: Sequence[dict],
                         num_classes: int) -> List[str]:
    """Every problem of training samples' label indices, as the head reads
    them: ``gt_label`` and ``gt_label_neg`` outside ``[0, num_classes)``, a
    sample without a positive, a class both positive and negative.

    Args:
        where (str): Names the dataset in each line.
        infos (Sequence[dict]): The samples' data infos (``gt_label``,
            optionally ``gt_label_neg`` and ``img_path``), in sample order.
        num_classes (int): The head's number of classes.

    Returns:
        list[str]: One line per problem, ``<where> sample <k> (<path>):
        ...``.
    """
    problems = []
    for k, info in enumerate(infos):
        row = f'{where} sample {k} ({info.get("img_path")})'
        labels = {
            name: np.asarray(info.get(key, ()), dtype=np.int64).reshape(-1)
            for name, key in (('labels', 'gt_label'),
                              ('negatives', 'gt_label_neg'))
        }
        if not len(labels['labels']):
            problems.append(f'{row}: no positive label; every training '
                            'sample needs its observed positive')
        for name, index in labels.items():
            if len(index) and (index.min() < 0 or index.max() >= num_classes):
                problems.append(
                    f'{row}: {name} {index.tolist()} outside the head\'s '
                    f'num_classes={num_classes}; make the head and dataset '
                    'agree')
        both = np.intersect1d(labels['labels'], labels['negatives'])
        if len(both):
            problems.append(f'{row}: observes classes {both.tolist()} both '
                            'positive and negative')
    return problems


def _indices(info: dict, key: str) -> Tuple[int, ...]:
    return tuple(
        sorted(np.asarray(info.get(key, ()), np.int64).reshape(-1).tolist()))


def _labels_of(info: dict) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """What a sample says of its image: its full labels where it carries
    them (``gt_label_full`` of a training sample, whose observed positive is
    drawn per row), else its positives and known negatives."""
    if 'gt_label_full' in info:
        return _indices(info, 'gt_label_full'), ()
    return _indices(info, 'gt_label'), _indices(info, 'gt_label_neg')


def _describe(labels: Tuple[Tuple[int, ...], Tuple[int, ...]]) -> str:
    positives, negatives = labels
    return f'labels {list(positives)}' + (
        f', negatives {list(negatives)}' if negatives else '')


def _by_path(infos: Sequence[dict]) -> Dict[str, List[int]]:
    """The samples of each image path (normalised), in sample order."""
    groups: Dict[str, List[int]] = {}
    for k, info in enumerate(infos):
        path = info.get('img_path')
        if path is not None:
            groups.setdefault(osp.normpath(str(path)), []).append(k)
    return groups


def duplicate_findings(where: str,
                       infos: Sequence[dict]) -> Tuple[List[str], List[str]]:
    """Images listed more than once in one split.

    Copies with different labels are a problem (which row is right is
    unknown); copies with the same labels are a warning (the image weighs
    several times in the loss and the scores).

    Args:
        where (str): Names the split in each line.
        infos (Sequence[dict]): The samples' data infos (``img_path``,
            ``gt_label``, ``gt_label_neg``, ``gt_label_full``).

    Returns:
        tuple[list[str], list[str]]: The problems and the warnings, one line
        per image.
    """
    problems, warnings = [], []
    for path, samples in _by_path(infos).items():
        if len(samples) < 2:
            continue
        labels = [_labels_of(infos[k]) for k in samples]
        if len(set(labels)) > 1:
            rows = '; '.join(f'sample {k}: {_describe(label)}'
                             for k, label in zip(samples, labels))
            problems.append(
                f'{where}: image {path} is listed {len(samples)} times with '
                f'different labels ({rows}); keep one row, with its right '
                'labels')
        else:
            warnings.append(
                f'{where}: image {path} is listed {len(samples)} times with '
                f'the same labels (samples '
                f'{", ".join(map(str, samples))}); it counts '
                f'{len(samples)} times in the loss and the scores: keep one '
                'row')
    return problems, warnings


def shared_image_findings(
        splits: Dict[str, Sequence[dict]]) -> Tuple[List[str], List[str]]:
    """Images in more than one split.

    A training image in the val or test split is a problem (that split
    then scores images the model was trained on); an image in both the val
    and the test split is a warning (MMPretrain-style configs validate on
    the test set on purpose).

    Args:
        splits (dict[str, Sequence[dict]]): The data infos of each split by
            name (``'train'``, ``'val'``, ``'test'``).

    Returns:
        tuple[list[str], list[str]]: The problems and the warnings, one line
        per shared image.
    """
    groups = {name: _by_path(infos) for name, infos in splits.items()}
    problems, warnings = [], []
    for a, b in itertools.combinations(groups, 2):
        for path in groups[a].keys() & groups[b].keys():
            ka, kb = groups[a][path][0], groups[b][path][0]
            la, lb = _labels_of(splits[a][ka]), _labels_of(splits[b][kb])
            labels = (f'{_describe(la)} in both' if la == lb else
                      f'{_describe(la)} in {a}, {_describe(lb)} in {b}')
            line = (f'image {path} is in both the {a} split (sample {ka}) '
                    f'and the {b} split (sample {kb}), {labels}')
            if 'train' in (a, b):
                problems.append(
                    f'{line}; the {b if a == "train" else a} scores would '
                    'count an image the model trained on: list it in one '
                    'split only')
            else:
                warnings.append(line)
    return sorted(problems), sorted(warnings)


def classes_without_positive(where: str, infos: Sequence[dict],
                             classes: Sequence[str]) -> Optional[str]:
    """The warning for classes that no training sample has as a positive
    (``gt_label``: the observed positives the loss sees), or None.

    The model never sees a positive of such a class, and its AP measures
    nothing it learned.

    Args:
        where (str): Names the training split.
        infos (Sequence[dict]): The training samples' data infos.
        classes (Sequence[str]): The class names.

    Returns:
        str | None: One line naming every such class, or None.
    """
    num_classes = len(classes)
    labels = [np.asarray(info.get('gt_label', ()), np.int64).reshape(-1)
              for info in infos]
    labels = np.concatenate(labels) if labels else np.zeros(0, np.int64)
    labels = labels[(labels >= 0) & (labels < num_classes)]
    missing = np.flatnonzero(np.bincount(labels, minlength=num_classes) == 0)
    if not len(missing):
        return None
    names = ', '.join(
        str(c) if str(classes[c]) == str(c) else f'{c} ({classes[c]})'
        for c in missing.tolist())
    return (f'{where}: {len(missing)} of {num_classes} classes have no '
            f'positive label in the training split: {names}; the model '
            'never sees a positive of them and their AP measures nothing '
            'learned: add training images of them or leave them out of '
            'the classes')


def expected_positives_problem(k: Optional[float],
                               num_classes: Optional[int]) -> Optional[str]:
    """The problem of a loss that expects ``k`` positives per image (EPR's
    and ROLE's ``expected_positives``) with ``num_classes`` classes, or None
    when either is unknown or ``k`` fits."""
    if k is None or num_classes is None or k <= num_classes:
        return None
    return (f'model.head.loss.expected_positives={k} (k) exceeds '
            f'model.head.num_classes={num_classes}: an image cannot have more '
            "positive labels than there are classes; set k to the dataset's "
            'mean number of positives per image.')


def image_problems(where: str,
                   paths: Sequence[str],
                   decode: bool = False,
                   checked: Optional[set] = None) -> List[str]:
    """Every missing, unreadable, empty or (with ``decode``) undecodable
    image among ``paths``.

    Args:
        where (str): Names the dataset in each line.
        paths (Sequence[str]): Image paths in sample order.
        decode (bool): Decode every image (as ``LoadImageFromFile`` does);
            slow on large datasets. Defaults to False.
        checked (set, optional): Paths checked already (by another split),
            which are skipped; the paths checked here are added.

    Returns:
        list[str]: One line per problem, ``<where> sample <k> (<path>): ...``.
    """
    if decode:
        import mmcv
        from mmengine.fileio import get
    problems = []
    for k, path in enumerate(paths):
        if checked is not None:
            if path in checked:
                continue
            checked.add(path)
        row = f'{where} sample {k} ({path})'
        if not osp.isfile(path):
            problems.append(f'{row}: image file missing')
        elif not os.access(path, os.R_OK):
            problems.append(f'{row}: image file not readable (permissions)')
        elif osp.getsize(path) == 0:
            problems.append(f'{row}: image file is empty (0 bytes)')
        elif decode:
            try:
                image = mmcv.imfrombytes(get(path))
            except Exception as err:  # any decoder failure is reported
                image, reason = None, f' ({type(err).__name__}: {err})'
            else:
                reason = ''
            if image is None:
                problems.append(f'{row}: image cannot be decoded{reason}')
    return problems
