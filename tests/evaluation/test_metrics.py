import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score

from spml_mm.evaluation import (SPMLAveragePrecision,
                                average_precision_per_class,
                                mean_average_precision)


def test_against_sklearn():
    rng = np.random.RandomState(0)
    labels = (rng.rand(50, 6) < 0.3).astype(int)
    labels[0] = 1
    scores = rng.rand(50, 6) + 0.3 * labels
    expected = [average_precision_score(labels[:, k], scores[:, k])
                for k in range(6)]
    np.testing.assert_allclose(
        average_precision_per_class(scores, labels), 100 * np.array(expected))
    assert mean_average_precision(scores, labels) == pytest.approx(
        100 * np.mean(expected))


def test_hand_computed_and_empty_class():
    scores = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    labels = np.array([[1, 0], [0, 0], [1, 0]])
    # ranking 0.9 (+), 0.8 (-), 0.3 (+): AP = (1/1 + 2/3) / 2
    ap = average_precision_per_class(scores, labels)
    np.testing.assert_allclose(ap, [100 * (1 + 2 / 3) / 2, 0.])
    assert mean_average_precision(scores, labels) == pytest.approx(
        100 * (1 + 2 / 3) / 4)
    with pytest.raises(ValueError, match=r'\(N, C\)'):
        average_precision_per_class(scores, labels[:, :1])


def test_registered_metric_per_class():
    metric = SPMLAveragePrecision(per_class=True)
    metric.dataset_meta = dict(classes=('a', 'b'))
    samples = [
        dict(pred_score=torch.tensor([0.9, 0.1]), gt_label=torch.tensor([0])),
        dict(pred_score=torch.tensor([0.8, 0.6]), gt_label=torch.tensor([1])),
        dict(pred_score=torch.tensor([0.3, 0.7]), gt_label=torch.tensor([0,
                                                                         1])),
    ]
    metric.process(None, samples)
    out = metric.evaluate(3)
    scores = np.array([[0.9, 0.1], [0.8, 0.6], [0.3, 0.7]])
    labels = np.array([[1, 0], [0, 1], [1, 1]])
    assert out['spml/mAP'] == pytest.approx(
        mean_average_precision(scores, labels))
    assert out['spml/AP_a'] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert out['spml/AP_b'] == pytest.approx(100.)
