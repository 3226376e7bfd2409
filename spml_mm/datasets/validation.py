"""Checks of a dataset's labels and image files that report every problem.

The datasets run :func:`label_problems` when they are built;
``SPMLDatasetCheckHook`` runs :func:`index_label_problems` on the training
set and :func:`image_problems` before training or testing;
``tools/check_dataset.py CONFIG`` runs :func:`label_problems` and
:func:`image_problems` on every split, with image decoding under
``--decode``.
"""
import os
import os.path as osp
from typing import List, Optional, Sequence

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
                   decode: bool = False) -> List[str]:
    """Every missing, unreadable, empty or (with ``decode``) undecodable
    image among ``paths``.

    Args:
        where (str): Names the dataset in each line.
        paths (Sequence[str]): Image paths in sample order.
        decode (bool): Decode every image (as ``LoadImageFromFile`` does);
            slow on large datasets. Defaults to False.

    Returns:
        list[str]: One line per problem, ``<where> sample <k> (<path>): ...``.
    """
    if decode:
        import mmcv
        from mmengine.fileio import get
    problems = []
    for k, path in enumerate(paths):
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
