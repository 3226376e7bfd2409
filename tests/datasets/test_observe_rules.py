"""The protocol's non-uniform draws (observe_labels, SPMLDataset's
observe): which positive each rule keeps, and that the uniform draw and the
negatives are unchanged."""
import numpy as np
import pytest

from spml_mm.datasets.protocol import observe_labels, observe_uniform

LABELS = np.array([[1, 1, 0, 0],
                   [1, 0, 1, 0],
                   [0, 1, 1, 1],
                   [1, 1, 1, 0],
                   [1, 0, 0, 1]], dtype=float)  # class counts 4, 3, 3, 2


def test_each_rule_keeps_its_positive():
    assert np.array_equal(observe_labels(LABELS, 'uniform', seed=3),
                          observe_uniform(LABELS, seed=3))
    common = observe_labels(LABELS, 'commonest')
    assert (common == 1).argmax(1).tolist() == [0, 0, 1, 0, 0]
    rare = observe_labels(LABELS, 'rarest')
    kept = (rare == 1).argmax(1).tolist()
    assert kept[:3] + kept[4:] == [1, 2, 3, 3]
    assert kept[3] in (1, 2)  # a tie (3 and 3 images), broken at random
    salience = np.arange(20, dtype=float).reshape(5, 4)[:, ::-1]
    large = observe_labels(LABELS, 'largest', salience=salience)
    assert (large == 1).argmax(1).tolist() == [0, 0, 1, 0, 0]
    for observed in (common, rare, large):
        assert ((observed == 1).sum(1) == 1).all()
        assert (LABELS[observed == 1] == 1).all()


def test_negatives_are_the_uniform_draws_and_rules_are_checked():
    for rule in ('commonest', 'rarest'):
        assert np.array_equal(
            observe_labels(LABELS, rule, num_neg=1, seed=5) == -1,
            observe_uniform(LABELS, num_neg=1, seed=5) == -1)
    with pytest.raises(ValueError, match='rule must be one of'):
        observe_labels(LABELS, 'central')
    with pytest.raises(ValueError, match='needs a salience matrix'):
        observe_labels(LABELS, 'largest')


def test_the_dataset_draws_by_its_rule(tiny_demo):
    import spml_mm  # noqa: F401
    from spml_mm.datasets import SPMLDataset

    def first(observe):
        data = SPMLDataset(tiny_demo, observe=observe, val_frac=0.,
                           pipeline=[])
        return [data.get_data_info(k) for k in range(len(data))]

    uniform, rarest = first('uniform'), first('rarest')
    counts = np.zeros(10)
    for info in uniform:
        counts[info['gt_label_full']] += 1
    for info in rarest:
        full = info['gt_label_full']
        assert counts[info['gt_label'][0]] == counts[full].min()
    assert any(a['gt_label'][0] != b['gt_label'][0]
               for a, b in zip(uniform, rarest))
    with pytest.raises(ValueError, match='observe must be one of'):
        SPMLDataset(tiny_demo, observe='random', pipeline=[])
