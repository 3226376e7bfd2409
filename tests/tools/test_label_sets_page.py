import numpy as np
import pytest

from benchmark import label_sets
from benchmark.pages import label_sets as label_sets_page


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
    # conformal on exchangeable splits reaches about its target recall
    for alpha in label_sets_page.ALPHAS:
        reached = found['conformal_recall'][str(alpha)]['observed']
        assert reached == pytest.approx(100 * (1 - alpha), abs=6)


def test_page_renders_every_suite_and_says_which_to_use():
    runs = {m: label_sets.evaluate(synthetic(seed))
            for seed, m in enumerate(('an', 'gr'))}
    suite = dict(title='Demo dataset', command='cmd', machine='here',
                 positives_per_image=1.9, runs=runs,
                 conclusion=label_sets_page.conclusion(runs))
    page = label_sets_page.render(dict(suites={'demo': suite}))
    assert '## Demo dataset' in page and '| AN |' in page
    assert '| GR |' in page
    assert 'closes the most of the CF1 gap without full labels' in \
        suite['conclusion']
    header = [line for line in page.splitlines()
              if line.startswith('| method | mAP')][0]
    assert header.count('|') - 1 == 2 + len(label_sets_page.DECISIONS) + 2


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
