import numpy as np
import pytest

from benchmark import label_sets
from benchmark.pages import label_sets as label_sets_page
from spml_mm.evaluation import estimate_positives_per_image, prior_thresholds


def synthetic(seed=0, n=400, c=4):
    """Scores that rank the truth well, with one observed positive per
    validation image drawn among its labels."""
    rng = np.random.RandomState(seed)
    data = {'classes': [f'c{k}' for k in range(c)]}
    for split in ('val', 'test'):
        labels = rng.rand(n, c) < 0.4
        labels[np.arange(n), rng.randint(c, size=n)] = True
        scores = np.clip(0.3 * labels + 0.7 * rng.rand(n, c), 0, 1)
        data[f'{split}_scores'] = scores
        data[f'{split}_known'] = np.where(labels, 1, -1).astype(np.int8)
    val = data['val_known'] == 1
    observed = np.zeros_like(data['val_known'])
    for i in range(n):
        observed[i, rng.choice(np.flatnonzero(val[i]))] = 1
    data['valobs_known'] = observed
    return data


def test_observation_bias_shows_scores_that_favour_few_labels():
    """The observed positive of an image is drawn among its labels, so
    images with few labels are over-represented among observed positives:
    where the scores do not depend on the number of labels, the observed
    positives' recall is about all positives'; where an image with one
    label scores its class higher, it is above."""
    data = synthetic(n=4000)
    val, observed = data['val_known'] == 1, data['valobs_known']
    even = label_sets.estimate_error(data['val_scores'], observed, val)
    assert abs(even['observed_recall_bias']) < 2
    favour = data['val_scores'] + 0.2 * (val & (val.sum(1) == 1)[:, None])
    biased = label_sets.estimate_error(favour, observed, val)
    assert biased['observed_recall_bias'] > 3


def test_evaluate_against_direct_counts():
    data = synthetic()
    found = label_sets.evaluate(data)
    labels = data['test_known'] == 1
    rows = found['decisions']
    # the 0.5 row counts the label sets scores >= 0.5 give
    pred = data['test_scores'] >= 0.5
    tp = (pred & labels).sum()
    assert rows['0.5']['OP'] == pytest.approx(100 * tp / pred.sum())
    assert rows['0.5']['OR'] == pytest.approx(100 * tp / labels.sum())
    # the oracle is per-class F1-optimal on the test split: no decision
    # chosen elsewhere beats its per-class F1, hence its CF1 bound below
    for key, row in rows.items():
        assert row['CF1'] <= rows['oracle']['CF1'] + 1.5, key
    gap = rows['oracle']['CF1'] - rows['0.5']['CF1']
    assert rows['prior']['gap_closed'] == pytest.approx(
        (rows['prior']['CF1'] - rows['0.5']['CF1']) / gap)
    assert found['positives_per_image'] == pytest.approx(
        (data['val_known'] == 1).sum(1).mean())
    # the estimate of m: the validation split's labels counted directly,
    # and class-prior matching with the estimate predicts each class on its
    # estimated prior's share
    estimate = found['estimate']
    val = data['val_known'] == 1
    assert estimate['positives_per_image'] == pytest.approx(
        val.sum(1).mean())
    m, priors = estimate_positives_per_image(data['val_scores'],
                                             data['valobs_known'])
    assert estimate['estimated'] == pytest.approx(m)
    assert estimate['error'] == pytest.approx(
        100 * (m / val.sum(1).mean() - 1))
    assert estimate['at_bound'] == 0
    assert estimate['prior_error'] == pytest.approx(
        100 * np.abs(priors - val.mean(0)).mean())
    assert rows['prior_estimated'] == label_sets.label_set_metrics(
        data['test_scores'] >= prior_thresholds(
            data['val_scores'], data['valobs_known'], m,
            priors=priors)[0],
        labels.astype(np.uint8)) | dict(
            gap_closed=rows['prior_estimated']['gap_closed'])
    # F1 on every labelled validation image: with the test split as the
    # validation split it is the oracle; on a subset of it, not quite
    same = dict(data, val_scores=data['test_scores'],
                val_known=data['test_known'])
    same_rows = label_sets.decisions(same, 2.)
    assert (same_rows['f1_val'] == same_rows['oracle']).all()
    assert not (same_rows['f1_subset'] == same_rows['oracle']).all()
    # conformal on exchangeable splits reaches about its target recall
    for alpha in label_sets_page.ALPHAS:
        reached = found['conformal_recall'][str(alpha)]['observed']
        assert reached == pytest.approx(100 * (1 - alpha), abs=6)


def test_page_renders_every_suite_and_says_which_to_use():
    runs = {m: label_sets.evaluate(synthetic(seed))
            for seed, m in enumerate(('an', 'full'))}
    suite = dict(title='Demo dataset', command='cmd', machine='here',
                 positives_per_image=1.9, runs=runs,
                 conclusion=label_sets_page.conclusion(runs))
    page = label_sets_page.render(dict(suites={'demo': suite}))
    assert '## Demo dataset' in page and '| AN |' in page
    assert '| full-label BCE (upper bound) |' in page
    assert 'closes the most of the CF1 gap without full labels' in \
        suite['conclusion']
    header = [line for line in page.splitlines()
              if line.startswith('| method | mAP')][0]
    assert header.count('|') - 1 == 2 + len(label_sets_page.DECISIONS) + 2
    assert '**Estimated labels per image**' in page
    assert 'The estimate of m is within 15% of the data\'s for' in \
        suite['conclusion']
    # the section on ReaL's label sets, from its json entry
    real = dict(command='cmd', machine='here', images=46837, classes=1000,
                multi_label=15.9, seed=0, levels=[
                    dict(a=20, b=2, mAP=99.9, positives_per_image=1.229,
                         estimated=1.225, error=-0.3, prior_error=0.01,
                         at_bound=0),
                    dict(a=6, b=2, mAP=47.1, positives_per_image=1.229,
                         estimated=27.3, error=2121, prior_error=2.6,
                         at_bound=3)])
    page = label_sets_page.render(dict(suites={'demo': suite}, real=real))
    assert '| Beta(6, 2), Beta(2, 6) | 47.1 | 1.229 | 27.300 | +2121 |' in \
        page
    assert '| 1.225 | -0.3 |' in page
    assert 'within 15% of m for 1 of 2 score levels' in page


def test_real_label_sets_from_timm():
    pytest.importorskip('timm')
    labels = label_sets.real_label_sets()
    # ReaL: 50,000 images, 46,837 with a label set, 1.23 labels each
    assert labels.shape == (46837, 1000)
    assert labels.sum(1).mean() == pytest.approx(1.2288, abs=1e-4)
    assert (labels.sum(1) > 1).mean() == pytest.approx(0.1589, abs=1e-4)


def test_a_refused_calibration_is_shown_not_fatal():
    data = synthetic(n=120, c=4)
    # class 3 observed on 2 validation images only: conformal refuses it
    observed = data['valobs_known']
    rows = np.flatnonzero(observed[:, 3] == 1)[2:]
    observed[rows, 3], observed[rows, 0] = 0, 1
    found = label_sets.evaluate(data)
    row = found['decisions']['conformal_0.1']
    assert row['CF1'] is None and "'c3' (2)" not in row['refused']
    assert row['refused'].startswith('1 of 4 classes have fewer than 9')
    assert found['conformal_recall']['0.1']['observed'] is None
    assert found['decisions']['prior']['CF1'] is not None
    runs = {'an': found}
    text = label_sets_page.conclusion(runs)
    assert 'Conformal, alpha 0.1 refused for 1 of 1 methods (AN): 1 of 4' \
        in text
    suite = dict(title='t', command='c', machine='m',
                 positives_per_image=1.5, runs=runs, conclusion=text)
    assert '| refused |' in label_sets_page.render(dict(suites={'t': suite}))
