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


def evaluate(samples, classes, per_class=True, monkeypatch=None):
    """The metric's output on ``samples`` and the lines it logged."""
    metric = SPMLAveragePrecision(per_class=per_class)
    metric.dataset_meta = dict(classes=classes)
    logged = []
    monkeypatch.setattr('spml_mm.evaluation.metrics.print_log',
                        lambda msg, **kwargs: logged.append(msg))
    metric.process(None, samples)
    return metric.evaluate(len(samples)), logged


def partial_samples(masked_score=0.95, extra=()):
    """Four images, two classes; +1 / -1 known, 0 unknown (masked):
    class a: +1 -1  0 +1, class b: -1  0 +1 -1 (and ``extra`` columns)."""
    scores = [[0.9, 0.2], [0.8, 0.9], [masked_score, 0.6], [0.3, 0.7]]
    positives = [[0], [], [1], [0]]
    negatives = [[1], [0], [], [1]]
    for column in extra:  # (scores, known) of one more class per image
        for k, (score, state) in enumerate(zip(*column)):
            scores[k].append(score)
            c = len(scores[k]) - 1
            if state == 1:
                positives[k].append(c)
            elif state == -1:
                negatives[k].append(c)
    return [dict(pred_score=torch.tensor(s), gt_label=torch.tensor(p),
                 gt_label_neg=np.array(n, dtype=np.int64))
            for s, p, n in zip(scores, positives, negatives)]


def test_masked_observed_and_full_map_by_hand(monkeypatch):
    out, logged = evaluate(partial_samples(), ('a', 'b'),
                           monkeypatch=monkeypatch)
    # annotated entries only: a ranks .9(+) .8(-) .3(+), b ranks .7(-)
    # .6(+) .2(-); image 2's score on a is masked
    ap_a, ap_b = 100 * (1 + 2 / 3) / 2, 100 * 1 / 2
    assert out['spml/AP_annotated_a'] == pytest.approx(ap_a)
    assert out['spml/AP_annotated_b'] == pytest.approx(ap_b)
    assert out['spml/mAP_annotated'] == pytest.approx((ap_a + ap_b) / 2)
    # unknown counted negative (community code): a ranks .95(-) .9(+) .8(-)
    # .3(+), b ranks .9(-) .7(-) .6(+) .2(-)
    obs_a, obs_b = 100 * (1 / 2 + 2 / 4) / 2, 100 / 3
    assert out['spml/AP_observed_a'] == pytest.approx(obs_a)
    assert out['spml/AP_observed_b'] == pytest.approx(obs_b)
    assert out['spml/mAP_observed'] == pytest.approx((obs_a + obs_b) / 2)
    # full labels where they exist: images 0 and 3 know both classes; b has
    # no positive there and counts 0
    assert out['spml/AP_a'] == 100. and out['spml/AP_b'] == 0.
    assert out['spml/mAP'] == pytest.approx(50.)
    assert list(out)[0] == 'spml/mAP'
    assert logged == [
        'SPMLAveragePrecision: 2 of 4 images with partly unknown labels (2 '
        'fully labelled); spml/mAP_annotated over annotated entries only '
        '(unknown ones masked); spml/mAP_observed counts unknown entries as '
        'negatives; spml/mAP over the 2 fully labelled images.']


def test_a_masked_entry_changes_nothing(monkeypatch):
    before, _ = evaluate(partial_samples(0.95), ('a', 'b'),
                         monkeypatch=monkeypatch)
    after, _ = evaluate(partial_samples(0.1), ('a', 'b'),
                        monkeypatch=monkeypatch)
    for key in ('mAP_annotated', 'AP_annotated_a', 'AP_annotated_b', 'mAP',
                'AP_a'):
        assert after[f'spml/{key}'] == before[f'spml/{key}'], key
    # the observed mAP counts the entry as a negative: ranked last now,
    # a's AP is the annotated one
    assert after['spml/AP_observed_a'] == pytest.approx(100 * (1 + 2 / 3) /
                                                        2)
    assert after['spml/AP_observed_a'] != before['spml/AP_observed_a']


def test_classes_without_annotated_positive_or_negative_are_left_out(
        monkeypatch):
    unknown = ([0.5, 0.1, 0.9, 0.2], [0, 0, 0, 0])
    no_negative = ([0.5, 0.1, 0.9, 0.2], [1, 0, 0, 0])
    out, logged = evaluate(partial_samples(extra=(unknown, no_negative)),
                           ('a', 'b', 'c', 'd'), monkeypatch=monkeypatch)
    reference, _ = evaluate(partial_samples(), ('a', 'b'),
                            monkeypatch=monkeypatch)
    assert out['spml/mAP_annotated'] == reference['spml/mAP_annotated']
    assert 'spml/AP_annotated_c' not in out
    assert 'spml/AP_annotated_d' not in out
    assert out['spml/AP_observed_c'] == 0.
    assert '2 of 4 classes left out (1 without an annotated positive, 1 ' \
        'without an annotated negative)' in logged[0]


def test_without_fully_labelled_images_the_annotated_map_leads(monkeypatch):
    samples = [s for k, s in enumerate(partial_samples()) if k in (1, 2)]
    samples += [dict(pred_score=torch.tensor([0.6, 0.4]),
                     gt_label=torch.tensor([0]),
                     gt_label_neg=torch.tensor([]))]
    out, logged = evaluate(samples, ('a', 'b'), per_class=False,
                           monkeypatch=monkeypatch)
    # annotated: a: .8(-) .6(+) -> 1/2; b: no annotated negative
    # observed: a: .95(-) .8(-) .6(+) -> 1/3; b: .9(-) .6(+) .4(-) -> 1/2
    assert out == {'spml/mAP_annotated': pytest.approx(50.),
                   'spml/mAP_observed': pytest.approx(
                       100 * (1 / 3 + 1 / 2) / 2)}
    assert list(out)[0] == 'spml/mAP_annotated'
    assert logged[0].endswith('spml/mAP (full labels) not reported, read '
                              'spml/mAP_annotated.')
    # single positives annotate no negative: only the observed mAP is left
    single = [dict(s, gt_label_neg=np.zeros(0, dtype=np.int64))
              for s in samples]
    out, logged = evaluate(single, ('a', 'b'), per_class=False,
                           monkeypatch=monkeypatch)
    assert list(out) == ['spml/mAP_observed']
    assert 'spml/mAP_annotated not reported: every class lacks annotated ' \
        'positives or negatives (2 without an annotated negative)' in \
        logged[0]
    assert logged[0].endswith('read spml/mAP_observed.')


def test_full_labels_give_todays_map_under_every_key(monkeypatch):
    rng = np.random.RandomState(1)
    labels = (rng.rand(30, 4) < 0.4).astype(int)
    labels[:, 3] = 0  # a class without a positive counts 0 in spml/mAP
    scores = rng.rand(30, 4)
    samples = [dict(pred_score=torch.tensor(s),
                    gt_label=torch.tensor(np.flatnonzero(y)))
               for s, y in zip(scores, labels)]
    out, logged = evaluate(samples, ('a', 'b', 'c', 'd'), per_class=False,
                           monkeypatch=monkeypatch)
    assert list(out) == ['spml/mAP', 'spml/mAP_annotated',
                         'spml/mAP_observed']
    ap = [100 * average_precision_score(labels[:, k], scores[:, k])
          for k in range(3)]
    assert out['spml/mAP'] == pytest.approx(np.mean(ap + [0.]))
    assert out['spml/mAP_observed'] == out['spml/mAP']
    assert out['spml/mAP_annotated'] == pytest.approx(np.mean(ap))
    assert logged == ['SPMLAveragePrecision: spml/mAP_annotated over '
                      'annotated entries only (unknown ones masked), 1 of 4 '
                      'classes left out (1 without an annotated positive).']
