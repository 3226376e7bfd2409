"""Average precision of each class: the one ranking measure that the
metrics (:mod:`spml_mm.evaluation.metrics`) and the OPML label update rule
(:class:`~spml_mm.models.label_banks.updaters.OPMLLabelUpdater`) share, here
below both of them."""
import numpy as np


def average_precision_per_class(scores: np.ndarray,
                                labels: np.ndarray) -> np.ndarray:
    """Average precision of each class, in percent.

    AP follows scikit-learn's ``average_precision_score``. A class without a
    positive in ``labels`` has no AP (any ranking of its scores is as good
    as any other): NaN.

    Args:
        scores (np.ndarray): Predicted scores, shape (N, C).
        labels (np.ndarray): True 0/1 labels, shape (N, C).

    Returns:
        np.ndarray: AP per class (C,), in percent, NaN for a class without a
        positive.
    """
    # imported here: scikit-learn (and SciPy under it) costs a second of
    # every process that imports spml_mm but never ranks (a training
    # without validation, a refused run, the tools that only predict)
    from sklearn.metrics import average_precision_score
    scores, labels = np.asarray(scores), np.asarray(labels)
    if scores.shape != labels.shape or scores.ndim != 2:
        raise ValueError(f'scores and labels must both be (N, C), got '
                         f'{scores.shape} and {labels.shape}')
    ap = np.full(labels.shape[1], np.nan)
    for k in np.flatnonzero(labels.sum(0) > 0):
        ap[k] = 100 * average_precision_score(labels[:, k], scores[:, k])
    return ap
