"""The SPML data protocol of Cole et al. (2021), shared by all seed papers.

Both functions reproduce the released protocol bit for bit, random-number
sequence included, so that observed labels and splits match the papers'.
"""
from typing import Optional, Tuple

import numpy as np

#: How a protocol chooses the observed positives among an image's labels
#: (:func:`observe_labels`): ``uniform`` at random (the papers' protocol);
#: ``commonest`` / ``rarest`` the label of the class most / least frequent
#: in the split (a single-label pipeline that names the dominant category,
#: an annotator who names the distinctive one); ``largest`` the label with
#: the highest salience (e.g. object area: the largest or most central
#: object, as an annotator would name it), from a per-image salience matrix.
OBSERVE_RULES = ('uniform', 'commonest', 'rarest', 'largest')


def observe_uniform(label_matrix: np.ndarray,
                    num_pos: int = 1,
                    num_neg: int = 0,
                    seed: int = 1200) -> np.ndarray:
    """Keep ``num_pos`` random positives and ``num_neg`` random negatives.

    Rows are visited in order with one ``RandomState(seed)``; each row
    shuffles its positives, then its negatives (also when ``num_neg`` is 0,
    since the shuffle consumes random numbers that later rows depend on).
    A row with fewer positives (negatives) than asked keeps all of them.
    ``-1`` keeps all of them, after the same shuffle, as the community
    code: ``num_pos=1, num_neg=0`` is the single-positive protocol,
    ``num_pos=-1, num_neg=-1`` the full labels.

    Args:
        label_matrix (np.ndarray): Full 0/1 labels, shape (N, C).
        num_pos (int): Positives kept per row, >= 1, or -1 for all.
            Defaults to 1.
        num_neg (int): Negatives kept per row, >= 0, or -1 for all.
            Defaults to 0.
        seed (int): Seed of the ``RandomState``. Defaults to 1200.

    Returns:
        np.ndarray: Observed labels (N, C) in the input's dtype: +1 kept
        positive, -1 kept negative, 0 unobserved.
    """
    label_matrix = np.asarray(label_matrix)
    if label_matrix.ndim != 2:
        raise ValueError('label_matrix must be 2-D (N, C), got shape '
                         f'{label_matrix.shape}')
    if not np.isin(label_matrix, (0, 1)).all():
        raise ValueError('label_matrix must hold only 0 and 1')
    for name, value, low in (('num_pos', num_pos, 1), ('num_neg', num_neg,
                                                        0)):
        if not isinstance(value, (int, np.integer)) or not (
                value == -1 or value >= low):
            raise ValueError(f'{name} must be an int >= {low} or -1 (all), '
                             f'got {value!r}')
    # -1: every index, after the shuffle
    num_pos = None if num_pos == -1 else num_pos
    num_neg = None if num_neg == -1 else num_neg
    rng = np.random.RandomState(seed)
    signed = 2 * label_matrix - 1
    observed = np.zeros_like(signed)
    for i, row in enumerate(signed):
        pos = np.nonzero(row == 1)[0]
        rng.shuffle(pos)
        observed[i, pos[:num_pos]] = 1
        neg = np.nonzero(row == -1)[0]
        rng.shuffle(neg)
        observed[i, neg[:num_neg]] = -1
    return observed


def observe_labels(label_matrix: np.ndarray,
                   rule: str = 'uniform',
                   num_pos: int = 1,
                   num_neg: int = 0,
                   seed: int = 1200,
                   salience: Optional[np.ndarray] = None) -> np.ndarray:
    """Observe labels by one of :data:`OBSERVE_RULES`.

    ``uniform`` is :func:`observe_uniform`. The other rules visit the rows
    with the same ``RandomState(seed)`` and the same two shuffles per row,
    then keep the ``num_pos`` positives that rank first by the rule's key
    (class frequency in ``label_matrix`` for ``commonest``, its opposite for
    ``rarest``, ``salience`` for ``largest``); ties keep the shuffled order,
    so they are broken at random. Negatives are drawn as by
    :func:`observe_uniform` (they do not depend on the rule).

    Args:
        label_matrix (np.ndarray): Full 0/1 labels, shape (N, C).
        rule (str): One of :data:`OBSERVE_RULES`. Defaults to ``'uniform'``.
        num_pos (int): Positives kept per row, >= 1, or -1 for all.
        num_neg (int): Negatives kept per row, >= 0, or -1 for all.
        seed (int): Seed of the ``RandomState``. Defaults to 1200.
        salience (np.ndarray, optional): (N, C) scores of each label's
            salience (e.g. its object's area), needed by ``largest``.

    Returns:
        np.ndarray: Observed labels (N, C): +1 kept positive, -1 kept
        negative, 0 unobserved.
    """
    if rule not in OBSERVE_RULES:
        raise ValueError(f'rule must be one of {OBSERVE_RULES}, got {rule!r}')
    if rule == 'uniform':
        return observe_uniform(label_matrix, num_pos, num_neg, seed)
    label_matrix = np.asarray(label_matrix)
    # the same checks and random stream as the uniform draw: its negatives
    negatives = observe_uniform(label_matrix, num_pos, num_neg, seed)
    negatives[negatives == 1] = 0
    if rule == 'largest':
        if salience is None or np.shape(salience) != label_matrix.shape:
            raise ValueError(
                'rule largest needs a salience matrix of the labels\' shape '
                f'{label_matrix.shape} (e.g. each object\'s area), got '
                f'{None if salience is None else np.shape(salience)}')
        key = np.asarray(salience, dtype=np.float64)
    else:
        frequency = label_matrix.sum(0).astype(np.float64)
        key = np.broadcast_to(
            frequency if rule == 'commonest' else -frequency,
            label_matrix.shape)
    keep = None if num_pos == -1 else num_pos
    rng = np.random.RandomState(seed)
    observed = negatives
    for i, row in enumerate(label_matrix):
        pos = np.nonzero(row == 1)[0]
        rng.shuffle(pos)
        rng.shuffle(np.nonzero(row == 0)[0])  # the uniform draw's stream
        order = np.argsort(-key[i, pos], kind='stable')
        observed[i, pos[order][:keep]] = 1
    return observed


def split_train_val(num_samples: int,
                    val_frac: float = 0.2,
                    seed: int = 1200) -> Tuple[np.ndarray, np.ndarray]:
    """Split the official training split into train and validation parts.

    Args:
        num_samples (int): Size N of the official training split.
        val_frac (float): Fraction held out for validation. Defaults to 0.2.
        seed (int): Seed of the ``RandomState``. Defaults to 1200.

    Returns:
        tuple[np.ndarray, np.ndarray]: Sorted ``(train_idx, val_idx)``.
    """
    if not 0 <= val_frac < 1:
        raise ValueError(f'val_frac must be in [0, 1), got {val_frac}')
    rng = np.random.RandomState(seed)
    num_val = int(np.round(val_frac * num_samples))
    perm = rng.permutation(num_samples)
    train_idx = np.sort(perm[:num_samples - num_val])
    val_idx = np.sort(perm[num_samples - num_val:])
    return train_idx, val_idx
