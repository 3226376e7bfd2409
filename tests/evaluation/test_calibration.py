import numpy as np
import pytest

from spml_mm.apis import calibrate
from spml_mm.evaluation import (CalibrationError, conformal_thresholds,
                                estimate_class_priors,
                                estimate_positives_per_image,
                                f1_optimal_thresholds,
                                global_conformal_threshold, prior_thresholds)
from spml_mm.evaluation.calibration import (class_priors, impossible_priors,
                                           min_positives)


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
    # given priors replace m n_k / N
    t, _ = prior_thresholds(scores, observed, 2, priors=np.array([.3, .05]))
    np.testing.assert_array_equal((scores >= t).sum(0), [30, 5])
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
    # without m, prior and topk estimate it and record the estimate
    prior = calibrate('prior', scores, known, ['a', 'b'])
    m, priors = estimate_positives_per_image(scores, known)
    assert prior['estimated_positives_per_image'] == m
    assert prior['positives_per_image'] == m
    np.testing.assert_allclose(prior['estimated_priors'], priors)
    np.testing.assert_allclose(
        prior['thresholds'],
        prior_thresholds(scores, known, m, priors=priors)[0])
    assert calibrate('topk', scores, known, ['a', 'b'])['topk'] == \
        max(1, round(m))
    with pytest.raises(ValueError, match='val_full_subset'):
        calibrate('f1', scores, known, ['a', 'b'])
    full = np.where(scores > 0.5, 1, -1)
    f1 = calibrate('f1', scores, full, ['a', 'b'])
    assert f1['calibration_images'] == 50


def synthetic_single_positives(seed, num=3000, num_classes=8):
    """Images with 1 to 4 labels (true m known by construction), one
    observed positive drawn uniformly among each image's labels, and scores
    whose top bin is pure (positives up to 1, negatives below 0.7)."""
    rng = np.random.RandomState(seed)
    sizes = rng.choice([1, 2, 3, 4], num, p=[0.4, 0.3, 0.2, 0.1])
    weights = np.linspace(1, 3, num_classes)
    labels = np.zeros((num, num_classes), dtype=bool)
    observed = np.zeros((num, num_classes), dtype=int)
    for i, size in enumerate(sizes):
        chosen = rng.choice(num_classes, size, replace=False,
                            p=weights / weights.sum())
        labels[i, chosen] = True
        observed[i, rng.choice(chosen)] = 1
    scores = np.where(labels, rng.uniform(0.3, 1, labels.shape),
                      rng.uniform(0, 0.7, labels.shape))
    return scores, labels, observed


def brute_force_prior(scores, observed, num_classes, gamma=0.01, delta=0.1):
    """Top-bin estimate of one class, every candidate threshold tried from
    the highest down (a plain loop; the first of equal bounds kept)."""
    positive = observed == 1
    num, n = len(scores), positive.sum()
    slack = np.sqrt(np.log(4 / delta) / (2 * num)) + np.sqrt(
        np.log(4 / delta) / (2 * n))
    best, estimate = np.inf, None
    for t in sorted(set(scores.tolist()), reverse=True):
        above = np.mean(scores >= t)
        found = np.mean(scores[positive] >= t)
        if found == 0:
            continue
        bound = (above + (1 + gamma) * slack) / found
        if bound < best:
            best, estimate = bound, above / found
    return min(1, num_classes * n / num, max(n / num, estimate))


def test_estimated_priors_against_brute_force_and_truth():
    scores, labels, observed = synthetic_single_positives(0)
    # ties, so that only a cut after the last of equal scores counts
    scores = np.round(scores, 3)
    priors = estimate_class_priors(scores, observed)
    np.testing.assert_allclose(
        priors, [brute_force_prior(scores[:, k], observed[:, k], 8)
                 for k in range(scores.shape[1])])
    assert not impossible_priors(priors, observed).any()
    # the top bin is pure, so the estimate is near each true prior and m
    # near the true mean number of labels (2.0 by construction)
    np.testing.assert_allclose(priors, labels.mean(0), atol=0.04)
    m, found = estimate_positives_per_image(scores, observed)
    assert m == pytest.approx(found.sum())
    assert labels.sum(1).mean() == pytest.approx(2.0, abs=0.05)
    assert m == pytest.approx(labels.sum(1).mean(), rel=0.05)


def test_estimated_priors_hand_computed():
    # 10 images, class 0 observed on images 0 (0.9) and 2 (0.7): the cut
    # at 0.7 keeps above = 0.3 of the images and found = all observed
    # positives, bound (0.3 + 1.01 slack) / 1, lower than the cut at 0.9
    # ((0.1 + 1.01 slack) / 0.5, slack = 1.39) and than any lower cut
    # (found stays 1, above grows): the estimate is 0.3 / 1 (within the
    # bounds 0.2 and 2 x 0.2); class 1 is observed on the other images
    scores = np.stack([np.arange(9, -1, -1) / 10, np.arange(10) / 10], 1)
    observed = np.zeros((10, 2), dtype=int)
    observed[[0, 2], 0] = 1
    observed[:, 1] = 1 - observed[:, 0]
    assert estimate_class_priors(scores, observed)[0] == pytest.approx(0.3)
    # one observed positive at the top: the first cut gives 0.1 / 1
    observed[:, 0] = 0
    observed[0, 0] = 1
    observed[:, 1] = 1 - observed[:, 0]
    assert estimate_class_priors(scores, observed)[0] == pytest.approx(0.1)
    # m is kept at least 1
    m, _ = estimate_positives_per_image(np.ones((10, 2)) * 0.5,
                                        np.eye(2, dtype=int)[[0] * 9 + [1]])
    assert m >= 1


def test_estimated_priors_refuse_a_class_without_observed_positives():
    scores = np.random.RandomState(0).rand(20, 2)
    observed = np.zeros((20, 2), dtype=int)
    observed[:, 0] = 1
    with pytest.raises(CalibrationError, match=r"'dog' \(0\)"):
        estimate_class_priors(scores, observed, ['cat', 'dog'])


def test_estimated_priors_bounded_by_what_any_label_set_allows():
    # scores that rank nothing: 2 classes, class 1 observed on 1 of 40
    # images; no image has more than 2 labels, so its prior is at most
    # 2 / 40, where the estimate stops, and is flagged
    rng = np.random.RandomState(4)
    scores = rng.rand(40, 2)
    observed = np.zeros((40, 2), dtype=int)
    observed[1:, 0] = 1
    observed[0, 1] = 1
    scores[0, 1] = 0.0  # the observed positive scores lowest
    priors = estimate_class_priors(scores, observed)
    np.testing.assert_allclose(priors, [1, 2 / 40])
    np.testing.assert_array_equal(impossible_priors(priors, observed),
                                  [False, True])
