"""Decision thresholds for a model's scores, chosen without full labels.

A model trained on single positives ranks well (mAP) but its scores mean
different things per method: the threshold that turns scores into label sets
has to be chosen. Each function takes the scores ``s`` (N, C) of a
calibration split and returns one threshold per class, ``t`` (C,): class k is
predicted for an image when ``s_k >= t_k``.

- :func:`conformal_thresholds`: per class, the largest threshold that keeps
  at least ``1 - alpha`` of the class's observed positives (split conformal
  prediction on the positives alone: a new positive exchangeable with them
  scores above ``t_k`` with probability >= ``1 - alpha``).
- :func:`global_conformal_threshold`: the same over the observed positives
  of every class pooled, one threshold for all classes.
- :func:`prior_thresholds`: each class predicted on the share of images its
  prior says, the prior estimated from the observed positives and the mean
  number of positives per image m.
- :func:`estimate_class_priors` and :func:`estimate_positives_per_image`:
  each class's prior, and m, estimated from the observed positives and the
  scores alone (top-bin mixture proportion estimation), for when m is not
  known.
- :func:`f1_optimal_thresholds`: per class, the threshold of best F1 on
  fully labelled images (the reference the others are measured against).
"""
from typing import Sequence, Tuple

import numpy as np


class CalibrationError(ValueError):
    """A class has too few labels to calibrate its threshold."""


def _check(scores: np.ndarray, labels: np.ndarray) -> None:
    if scores.ndim != 2 or scores.shape != labels.shape:
        raise ValueError(f'scores and labels must both be (N, C), got '
                         f'{scores.shape} and {labels.shape}')
    if not np.isfinite(scores).all():
        raise ValueError('the scores hold NaN or infinite values')


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f'alpha must be in (0, 1), got {alpha}')


def conformal_rank(num_positives: np.ndarray, alpha: float) -> np.ndarray:
    """j = floor(alpha (n + 1)): the rank, from the lowest, of the observed
    positive score that is the threshold (0: too few positives)."""
    return np.floor(alpha * (np.asarray(num_positives) + 1) +
                    1e-9).astype(int)


def min_positives(alpha: float) -> int:
    """The fewest observed positives a class needs at ``alpha`` (j >= 1)."""
    return int(np.ceil(1 / alpha - 1e-9)) - 1


def _too_few(classes: Sequence[str], counts: np.ndarray, need: int,
             why: str) -> None:
    short = np.flatnonzero(counts < need)
    if len(short):
        listed = ', '.join(f'{str(classes[k])!r} ({counts[k]})'
                           for k in short[:10])
        more = f' and {len(short) - 10} more' if len(short) > 10 else ''
        raise CalibrationError(
            f'{len(short)} of {len(counts)} classes have fewer than {need} '
            f'observed positives in the calibration split ({why}): '
            f'{listed}{more}')


def conformal_thresholds(
        scores: np.ndarray,
        observed: np.ndarray,
        alpha: float,
        classes: Sequence[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Class-wise thresholds with recall >= 1 - alpha on observed positives.

    For class k with observed positive scores ``s_(1) <= ... <= s_(n)``,
    ``t_k = s_(j)`` with ``j = floor(alpha (n + 1))``: of n + 1 exchangeable
    positives, the new one falls below ``t_k`` with probability
    ``j / (n + 1) <= alpha``.

    Args:
        scores (np.ndarray): Scores (N, C) of the calibration images.
        observed (np.ndarray): Their observed labels (N, C), 1 at an observed
            positive (other values are ignored).
        alpha (float): Miss rate allowed, in (0, 1).
        classes (Sequence[str], optional): Class names for messages.

    Returns:
        tuple[np.ndarray, np.ndarray]: Thresholds (C,) and the number of
        observed positives (C,) each rests on.

    Raises:
        CalibrationError: A class has fewer than :func:`min_positives`
            observed positives; every such class is named.
    """
    _check(scores, observed)
    _check_alpha(alpha)
    positive = observed == 1
    counts = positive.sum(0)
    classes = classes or [str(k) for k in range(len(counts))]
    _too_few(classes, counts, max(min_positives(alpha), 1),
             f'at alpha={alpha:g} a class needs floor(alpha (n + 1)) >= 1')
    ranks = conformal_rank(counts, alpha)
    thresholds = np.array([
        np.sort(scores[positive[:, k], k])[ranks[k] - 1]
        for k in range(len(counts))
    ])
    return thresholds, counts


def global_conformal_threshold(scores: np.ndarray, observed: np.ndarray,
                               alpha: float) -> Tuple[np.ndarray, np.ndarray]:
    """One threshold for every class: :func:`conformal_thresholds` over the
    observed positives of all classes pooled (recall >= 1 - alpha over
    observed positives as a whole, not per class)."""
    _check(scores, observed)
    _check_alpha(alpha)
    positive = observed == 1
    pooled = np.sort(scores[positive])
    rank = conformal_rank(len(pooled), alpha)
    if rank < 1:
        raise CalibrationError(
            f'{len(pooled)} observed positives in the calibration split; '
            f'at alpha={alpha:g} the threshold needs {min_positives(alpha)}')
    return (np.full(scores.shape[1], pooled[rank - 1]), positive.sum(0))


def class_priors(observed: np.ndarray,
                 positives_per_image: float) -> np.ndarray:
    """pi_k = m * n_k / N: the share of images with class k, estimated from
    the share n_k / N of observed positives of class k (one positive per
    image, observed uniformly among its m positives on average), clipped to
    [0, 1]."""
    if not positives_per_image >= 1:
        raise ValueError('positives_per_image (the mean number of labels '
                         f'per image) must be >= 1, got {positives_per_image}')
    rate = (observed == 1).sum(0) / len(observed)
    return np.clip(positives_per_image * rate, 0, 1)


def estimate_class_priors(scores: np.ndarray,
                          observed: np.ndarray,
                          classes: Sequence[str] = None,
                          gamma: float = 0.01,
                          delta: float = 0.1) -> np.ndarray:
    """Each class's prior pi_k (the share of images that carry class k),
    estimated from the scores and the observed positives, without a full
    label: top-bin mixture proportion estimation (the "best bin
    estimation" of Garg et al., NeurIPS 2021), one class at a time.

    The scores of class k over all N images are a mixture: a share pi_k of
    positives, the rest negatives. The images that observe class k are a
    sample of its positives. Above any threshold t, the share of all images
    u(t) is at least pi_k times the share of observed positives p(t), with
    equality where only positives score (the top bin, if the model ranks
    some positives above every negative): u(t) / p(t) >= pi_k. The
    estimate is u / p at the threshold that minimises the upper confidence
    bound ``u / p + (1 + gamma) (e_N + e_n) / p`` (e_x = sqrt(log(4 /
    delta) / 2x), the finite-sample deviations of u over N images and of p
    over the class's n_k observed positives): a high threshold, where the
    bin is pure, but one with enough positives above it to be measured.
    Each estimate is then kept within [n_k / N, min(1, C n_k / N)]: every
    observed positive is a positive, and no image has more than C labels,
    so a class is observed on at least 1 / C of its positives (an estimate
    at that upper bound is certainly wrong: see :func:`impossible_priors`).

    The observed positive of an image is drawn among its labels, so it is
    not a uniform sample of the class's positives (an image with few labels
    is observed for each of them more often). That matters only in so far
    as the class's scores differ between images with few and many labels;
    the bias is measured on the label-sets results page. Where the model
    ranks no positives above its negatives (a weak model, a rare class
    among many), u / p stays above pi_k everywhere and the estimate is too
    high.

    Args:
        scores (np.ndarray): Scores (N, C) of the calibration images.
        observed (np.ndarray): Their observed labels (N, C), 1 at an observed
            positive (other values are ignored).
        classes (Sequence[str], optional): Class names for messages.
        gamma (float): Weight of the confidence term (the paper's 0.01).
        delta (float): Its confidence level (the paper's 0.1).

    Returns:
        np.ndarray: The estimated priors (C,).

    Raises:
        CalibrationError: A class has no observed positive; every such class
            is named.
    """
    _check(scores, observed)
    positive = observed == 1
    counts = positive.sum(0)
    classes = classes or [str(k) for k in range(len(counts))]
    _too_few(classes, counts, 1, 'its prior cannot be estimated')
    num = len(scores)
    priors = np.empty(scores.shape[1])
    for k in range(scores.shape[1]):
        order = np.argsort(-scores[:, k], kind='stable')
        ranked = scores[order, k]
        above = np.arange(1, num + 1) / num
        found = np.cumsum(positive[order, k]) / counts[k]
        # a threshold keeps every image scoring at least it: cut only after
        # the last of equal scores, and where an observed positive is above
        cut = np.r_[ranked[1:] != ranked[:-1], True] & (found > 0)
        slack = (np.sqrt(np.log(4 / delta) / (2 * num)) +
                 np.sqrt(np.log(4 / delta) / (2 * counts[k])))
        bound = np.full(num, np.inf)
        bound[cut] = (above[cut] + (1 + gamma) * slack) / found[cut]
        best = int(np.argmin(bound))
        priors[k] = above[best] / found[best]
    rate = counts / num
    return np.clip(priors, rate, np.minimum(1, len(counts) * rate))


def impossible_priors(priors: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The classes (a bool mask) whose estimated prior reached C times
    their observed rate n_k / N, the most any label distribution allows
    (each image's positive is drawn among at most C labels): the scores
    did not rank enough of the class's positives above its negatives, and
    the estimate of m that sums the priors is too high."""
    rate = (observed == 1).sum(0) / len(observed)
    bound = np.minimum(1, len(rate) * rate)
    return (priors >= bound - 1e-12) & (bound < 1)


def estimate_positives_per_image(
        scores: np.ndarray,
        observed: np.ndarray,
        classes: Sequence[str] = None) -> Tuple[float, np.ndarray]:
    """m, the mean number of labels per image, estimated without a full
    label: the sum of the estimated class priors
    (:func:`estimate_class_priors`), kept within [1, C].

    Returns:
        tuple[float, np.ndarray]: m and the class priors (C,).
    """
    priors = estimate_class_priors(scores, observed, classes)
    return float(np.clip(priors.sum(), 1, len(priors))), priors


def prior_thresholds(scores: np.ndarray,
                     observed: np.ndarray,
                     positives_per_image: float,
                     classes: Sequence[str] = None,
                     priors: np.ndarray = None
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """Per class, the threshold at which class k is predicted on the share
    ``pi_k`` (:func:`class_priors`, or ``priors`` when given, e.g.
    :func:`estimate_class_priors`) of the calibration images: the
    ``ceil(pi_k N)``-th highest score of the class.

    Raises:
        CalibrationError: A class without an observed positive (its prior
            estimate is 0); every such class is named.
    """
    _check(scores, observed)
    counts = (observed == 1).sum(0)
    classes = classes or [str(k) for k in range(len(counts))]
    _too_few(classes, counts, 1, 'its prior cannot be estimated')
    priors = class_priors(observed, positives_per_image) if priors is None \
        else np.asarray(priors, dtype=float)
    ranked = -np.sort(-scores, axis=0)
    num = np.clip(np.ceil(priors * len(scores) - 1e-9).astype(int), 1,
                  len(scores))
    return ranked[num - 1, np.arange(scores.shape[1])], counts


def f1_optimal_thresholds(scores: np.ndarray,
                          labels: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per class, the threshold of the highest F1 on fully labelled images:
    one of the class's scores, the highest among ties of the best F1; 1.0
    (nothing predicted, F1 0) for a class without a positive.

    Args:
        scores (np.ndarray): Scores (N, C).
        labels (np.ndarray): True labels (N, C), 0/1.

    Returns:
        tuple[np.ndarray, np.ndarray]: Thresholds (C,) and the positives
        (C,) of each class.
    """
    _check(scores, labels)
    labels = labels == 1
    counts = labels.sum(0)
    thresholds = np.ones(scores.shape[1])
    for k in np.flatnonzero(counts):
        order = np.argsort(-scores[:, k], kind='stable')
        ranked = scores[order, k]
        tp = np.cumsum(labels[order, k])
        # a threshold predicts every image scoring at least it: the last
        # position of each group of equal scores
        last = np.r_[ranked[1:] != ranked[:-1], True]
        f1 = 2 * tp / (np.arange(1, len(ranked) + 1) + counts[k])
        f1 = np.where(last, f1, -1)
        thresholds[k] = ranked[int(np.argmax(f1))]
    return thresholds, counts
