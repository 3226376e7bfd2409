import logging

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
    # ranking 0.9 (+), 0.8 (-), 0.3 (+): AP = (1/1 + 2/3) / 2; the second
    # class has no positive: no AP, and the mean is over the first alone
    ap = average_precision_per_class(scores, labels)
    np.testing.assert_allclose(ap, [100 * (1 + 2 / 3) / 2, np.nan])
    assert mean_average_precision(scores, labels) == pytest.approx(
        100 * (1 + 2 / 3) / 2)
    with pytest.raises(ValueError, match=r'\(N, C\)'):
        average_precision_per_class(scores, labels[:, :1])
    with pytest.raises(ValueError, match='no positive label among the 2 '
                       'classes of 3 samples: their mAP is undefined'):
        mean_average_precision(scores, np.zeros_like(labels))


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
    # full labels where they exist: images 0 and 3 know both classes; a is
    # positive on both (AP 100 whatever the ranking), b has no positive
    # there: no AP, left out of the mean, named in a warning
    assert out['spml/AP_a'] == 100. and 'spml/AP_b' not in out
    assert out['spml/mAP'] == pytest.approx(100.)
    assert list(out)[0] == 'spml/mAP'
    assert logged == [
        'SPMLAveragePrecision: classes without an AP are left out of the '
        'means: spml/mAP over 1 of 2 classes: 1 without a positive among the '
        '2 fully labelled images of the evaluation split (b).',
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
    # c has no observed positive either: no observed AP
    assert 'spml/AP_observed_c' not in out
    assert out['spml/mAP_observed'] == pytest.approx(np.mean(
        [out[f'spml/AP_observed_{c}'] for c in 'abd']))
    assert logged[0] == (
        'SPMLAveragePrecision: classes without an AP are left out of the '
        'means: spml/mAP_observed over 3 of 4 classes: 1 without an observed '
        'positive among the 4 images of the evaluation split (c); '
        'spml/mAP_annotated over 2 of 4 classes: 1 without an annotated '
        'positive (c), 1 without an annotated negative (d).')
    assert '2 of 4 classes left out (1 without an annotated positive, 1 ' \
        'without an annotated negative)' in logged[1]


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
    assert logged[0] == (
        'SPMLAveragePrecision: classes without an AP are left out of the '
        'means: spml/mAP_annotated over 1 of 2 classes: 1 without an '
        'annotated negative (b).')
    assert logged[1].endswith('spml/mAP (full labels) not reported, read '
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
    labels[:, 3] = 0  # a class without a positive: left out of every mean
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
    assert out['spml/mAP'] == pytest.approx(np.mean(ap))
    assert out['spml/mAP_observed'] == out['spml/mAP']
    assert out['spml/mAP_annotated'] == pytest.approx(np.mean(ap))
    assert logged == [
        'SPMLAveragePrecision: classes without an AP are left out of the '
        'means: spml/mAP and spml/mAP_observed over 3 of 4 classes: 1 without '
        'a positive among the 30 fully labelled images of the evaluation '
        'split (d); spml/mAP_annotated over 3 of 4 classes: 1 without an '
        'annotated positive (d).',
        'SPMLAveragePrecision: spml/mAP_annotated over '
        'annotated entries only (unknown ones masked), 1 of 4 '
        'classes left out (1 without an annotated positive).']


def demo_samples(labels, scores):
    return [dict(pred_score=torch.tensor(s, dtype=torch.float32),
                 gt_label=torch.tensor(np.flatnonzero(y)))
            for s, y in zip(scores, labels)]


def test_report_case_three_fully_labelled_images(monkeypatch):
    """The report: val_full_subset=3 on ten classes printed spml/mAP 30 and
    spml/mAP_annotated 60 without a word. Three images with four distinct
    positive classes, one of them on every image (no negative)."""
    labels = np.zeros((3, 10), int)
    labels[:, 0] = 1
    labels[0, 1] = labels[1, 2] = labels[2, 3] = 1
    scores = np.random.RandomState(0).rand(3, 10)
    classes = tuple('abcdefghij')
    out, logged = evaluate(demo_samples(labels, scores), classes,
                           per_class=False, monkeypatch=monkeypatch)
    ap = [100 * average_precision_score(labels[:, k], scores[:, k])
          for k in range(4)]
    assert ap[0] == 100.  # positive everywhere
    assert out['spml/mAP'] == pytest.approx(np.mean(ap))  # before: sum / 10
    assert out['spml/mAP_annotated'] == pytest.approx(np.mean(ap[1:]))
    assert logged[0] == (
        'SPMLAveragePrecision: classes without an AP are left out of the '
        'means: spml/mAP and spml/mAP_observed over 4 of 10 classes: 6 '
        'without a positive among the 3 fully labelled images of the '
        'evaluation split (e, f, g, h, i, j); spml/mAP_annotated over 3 of 10 '
        'classes: 6 without an annotated positive (e, f, g, h, i, j), 1 '
        'without an annotated negative (a).')


def test_names_the_split_and_shortens_long_lists(monkeypatch):
    labels = np.zeros((4, 14), int)
    labels[:, 0] = [1, 0, 1, 0]
    metric = SPMLAveragePrecision()
    metric.dataset_meta = dict(classes=[f'c{k}' for k in range(14)],
                               split='val')
    logged = []
    monkeypatch.setattr('spml_mm.evaluation.metrics.print_log',
                        lambda msg, **kwargs: logged.append((msg, kwargs)))
    metric.process(None, demo_samples(labels, np.ones((4, 14))))
    assert metric.evaluate(4)['spml/mAP'] == 50.
    message, kwargs = logged[0]
    assert kwargs['level'] == logging.WARNING
    assert ('over 1 of 14 classes: 13 without a positive among the 4 fully '
            'labelled images of the val split (c1, c2, c3, c4, c5, c6, c7, '
            'c8, c9, c10 and 3 more)') in message


def test_a_split_without_any_positive_is_refused():
    """Before: spml/mAP 0.0, and the best checkpoint saved on it."""
    metric = SPMLAveragePrecision()
    metric.dataset_meta = dict(classes=('a', 'b'), split='val')
    metric.process(None, demo_samples(np.zeros((3, 2), int),
                                      np.random.rand(3, 2)))
    with pytest.raises(ValueError) as err:
        metric.evaluate(3)
    assert str(err.value).startswith(
        'spml/mAP: no class has a positive among the 3 fully labelled '
        'images of the val split, so there is no mAP to report')
    assert 'python tools/check_dataset.py CONFIG' in str(err.value)


def test_dry_run_reports_the_keys_from_the_labels(monkeypatch):
    """The keys and warnings of the whole split, before any model runs."""

    class Labels:
        metainfo = dict(classes=('a', 'b', 'c'), split='val')
        rows = [dict(gt_label=np.array([0]), gt_label_neg=np.array([], int)),
                dict(gt_label=np.array([1]), gt_label_neg=np.array([], int))]

        def __len__(self):
            return len(self.rows)

        def get_data_info(self, i):
            return self.rows[i]

    metric = SPMLAveragePrecision()
    metric.dataset_meta = Labels.metainfo
    logged = []
    monkeypatch.setattr('spml_mm.evaluation.metrics.print_log',
                        lambda msg, **kwargs: logged.append(msg))
    assert list(metric.dry_run(Labels())) == ['spml/mAP_observed']
    assert ('spml/mAP_observed over 2 of 3 classes: 1 without an observed '
            'positive among the 2 images of the val split (c)') in logged[0]
