import numpy as np
import pytest

from spml_mm.apis import calibrate
from spml_mm.evaluation import (CalibrationError, conformal_thresholds,
                                f1_optimal_thresholds,
                                global_conformal_threshold, prior_thresholds)
from spml_mm.evaluation.calibration import class_priors, min_positives


def test_conformal_hand_computed():
    # class 0: 9 observed positives scoring 0.1 .. 0.9; alpha 0.2 -> j =
    # floor(0.2 * 10) = 2: the second lowest, 0.2
    scores = np.stack([np.arange(1, 10) / 10, np.linspace(0, 1, 9)], 1)
    observed = np.ones_like(scores)
    t, n = conformal_thresholds(scores, observed, 0.2)
    np.testing.assert_allclose(t, [0.2, 0.125])
    np.testing.assert_array_equal(n, [9, 9])
    # alpha 0.1: j = floor(0.1 * 10) = 1, the lowest
    t, _ = conformal_thresholds(scores, observed, 0.1)
    np.testing.assert_allclose(t, [0.1, 0.0])


def test_conformal_ignores_unobserved_and_negatives():
    scores = np.array([[0.9], [0.05], [0.8], [0.7]])
    observed = np.array([[1], [0], [1], [-1]])
    # 2 observed positives: at alpha 0.34, j = floor(0.34 * 3) = 1
    t, n = conformal_thresholds(scores, observed, 0.34)
    assert t[0] == 0.8 and n[0] == 2


def test_conformal_coverage_on_exchangeable_positives():
    # the guarantee: a new positive falls below t with probability
    # j / (n + 1) <= alpha, averaged over calibration draws
    rng = np.random.RandomState(0)
    misses = []
    for _ in range(2000):
        cal = rng.rand(40, 1)
        t, _ = conformal_thresholds(cal, np.ones_like(cal), 0.1)
        misses.append(rng.rand() < t[0])
    # j = floor(0.1 * 41) = 4: miss rate 4 / 41 = 0.0976
    assert np.mean(misses) == pytest.approx(4 / 41, abs=0.015)


def test_conformal_refuses_classes_with_too_few_positives():
    scores = np.random.RandomState(0).rand(30, 3)
    observed = np.zeros((30, 3))
    observed[:20, 0] = 1
    observed[:3, 1] = 1
    assert min_positives(0.1) == 9
    with pytest.raises(CalibrationError,
                       match=r"2 of 3 classes have fewer than 9 observed "
                       r"positives .*'cat' \(3\), 'dog' \(0\)"):
        conformal_thresholds(scores, observed, 0.1, ['bird', 'cat', 'dog'])
    with pytest.raises(ValueError, match=r'alpha must be in \(0, 1\)'):
        conformal_thresholds(scores, observed, 1.0)


def test_global_threshold_pools_classes():
    scores = np.array([[0.9, 0.2], [0.4, 0.6], [0.3, 0.8], [0.1, 0.7]])
    observed = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    # pooled positives 0.4, 0.7, 0.8, 0.9; alpha 0.4 -> j = floor(2) = 2
    t, n = global_conformal_threshold(scores, observed, 0.4)
    np.testing.assert_allclose(t, [0.7, 0.7])
    np.testing.assert_array_equal(n, [2, 2])


def test_prior_thresholds_predict_the_prior_share():
    rng = np.random.RandomState(1)
    scores = rng.rand(100, 2)
    observed = np.zeros((100, 2))
    observed[:10, 0] = 1  # 10% observed, m = 2: prior 20%
    observed[10:15, 1] = 1  # 5%: prior 10%
    np.testing.assert_allclose(class_priors(observed, 2), [0.2, 0.1])
    t, n = prior_thresholds(scores, observed, 2)
    np.testing.assert_array_equal((scores >= t).sum(0), [20, 10])
    np.testing.assert_array_equal(n, [10, 5])
    observed[:, 1] = 0
    with pytest.raises(CalibrationError, match=r"'b' \(0\)"):
        prior_thresholds(scores, observed, 2, ['a', 'b'])


def test_f1_optimal_against_brute_force():
    rng = np.random.RandomState(2)
    labels = (rng.rand(60, 4) < 0.3).astype(int)
    scores = np.round(rng.rand(60, 4) * 0.6 + 0.4 * labels, 2)  # ties
    t, n = f1_optimal_thresholds(scores, labels)

    def f1(k, thr):
        pred = scores[:, k] >= thr
        tp = (pred & (labels[:, k] == 1)).sum()
        return 2 * tp / (pred.sum() + labels[:, k].sum())

    for k in range(4):
        best = max(f1(k, c) for c in np.unique(scores[:, k]))
        assert f1(k, t[k]) == pytest.approx(best)
    np.testing.assert_array_equal(n, labels.sum(0))


def test_calibrate_records_and_refusals():
    scores = np.random.RandomState(3).rand(50, 2)
    known = np.zeros((50, 2), dtype=int)
    known[:25, 0] = known[25:, 1] = 1
    record = calibrate('conformal', scores, known, ['a', 'b'], alpha=0.2)
    assert record['alpha'] == 0.2 and record['positives'] == [25, 25]
    assert record['calibration_images'] == 50
    topk = calibrate('topk', scores, known, ['a', 'b'],
                     positives_per_image=1.4)
    assert topk['topk'] == 1 and 'thresholds' not in topk
    with pytest.raises(ValueError, match='--positives-per-image'):
        calibrate('prior', scores, known, ['a', 'b'])
    with pytest.raises(ValueError, match='val_full_subset'):
        calibrate('f1', scores, known, ['a', 'b'])
    full = np.where(scores > 0.5, 1, -1)
    f1 = calibrate('f1', scores, full, ['a', 'b'])
    assert f1['calibration_images'] == 50
