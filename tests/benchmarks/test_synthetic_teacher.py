import numpy as np
import pytest

from spml_mm.benchmarks.synthetic_teacher import synthetic_teacher_scores
from spml_mm.evaluation.metrics import mean_average_precision


@pytest.fixture
def labels():
    rng = np.random.default_rng(0)
    labels = rng.random((2000, 10)) < np.linspace(0.4, 0.05, 10)
    labels[labels.sum(1) == 0, 0] = True
    return labels


def test_quality_runs_from_prior_to_perfect(labels):
    maps = [
        mean_average_precision(
            synthetic_teacher_scores(labels, noise, seed=1)[0], labels)
        for noise in (1., 0.45, 0.3, 0.)
    ]
    prior = 100 * labels.mean(0).mean()
    assert maps[0] == pytest.approx(prior, abs=3)
    assert maps[-1] == pytest.approx(100)
    assert maps == sorted(maps)


def test_softmax_scores_and_crops(labels):
    scores, crops = synthetic_teacher_scores(labels, 0.2, seed=0,
                                             num_crops=4)
    assert scores.dtype == np.float32 and crops.shape == (2000, 4, 10)
    np.testing.assert_allclose(scores.sum(1), 1, rtol=1e-5)
    np.testing.assert_allclose(crops.sum(2), 1, rtol=1e-5)
    # the same seed gives the same whole-image scores with or without crops
    np.testing.assert_array_equal(
        synthetic_teacher_scores(labels, 0.2, seed=0)[0], scores)
    with pytest.raises(ValueError, match=r'noise must be in \[0, 1\]'):
        synthetic_teacher_scores(labels, 1.5)
