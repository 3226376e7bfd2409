""".dev_scripts/benchmark/selection.py: the criteria's values per epoch and the
(learning rate, epoch) each criterion selects, on hand-made scores."""
import numpy as np
import pytest

from benchmark.pages.selection import select, summarize
from benchmark.selection import run_values


def test_run_values_against_hand_computed_map():
    """Two classes, four validation images: full labels rank perfectly
    (mAP 100); the observed labels hide image 1's positive of class 0,
    which then counts as a negative ranked above the one observed positive
    of class 0: AP_0 = 1/2."""
    val = np.array([[.8, .1], [.9, .2], [.1, .7], [.2, .6]])
    labels = dict(
        val=np.array([[1, 0], [1, 0], [0, 1], [0, 1]]),
        val_observed=np.array([[1, 0], [0, 0], [0, 1], [0, 1]]),
        test=np.array([[1, 0], [0, 1]]))
    scores = {3: dict(val=val, test=np.array([[.2, .9], [.8, .1]]))}
    values = run_values(scores, labels, subsets=[2, 9], draws=2)['3']
    assert values['full'] == pytest.approx(100.)
    assert values['observed'] == pytest.approx(100 * (1 / 2 + 1) / 2)
    assert values['test'] == pytest.approx(50.)  # class 0 first, 1 last
    # a draw of 2 of 4 images, as val_full_subset=2, val_subset_seed=d
    rows = np.random.RandomState(1).permutation(4)[:2]
    own = labels['val'][rows]
    # the draw holds positives of one class only; the mean is over the
    # classes with a positive (each ranked perfectly: AP 100)
    assert own.any(axis=0).tolist() == [False, True]
    assert values['subset-2'][1] == pytest.approx(100.)
    assert 'subset-9' not in values  # larger than the split


def runs(values_by_lr):
    """lr -> epoch -> values from {lr: [(full, observed, subset draws,
    test), ...]}."""
    return {lr: {str(e + 1): dict(full=f, observed=o, **{'subset-2': s},
                                  test=t)
                 for e, (f, o, s, t) in enumerate(rows)}
            for lr, rows in values_by_lr.items()}


def test_select_picks_rate_and_epoch_per_criterion():
    seed = runs({'0.001': [(50, 10, [1, 9], 40), (60, 5, [2, 1], 45)],
                 '0.01': [(55, 30, [8, 2], 30), (40, 20, [3, 3], 35)]})
    assert select(seed, 'full') == 45  # lr 1e-3, epoch 2
    assert select(seed, 'observed') == 30  # lr 1e-2, epoch 1
    # draw 0 picks lr 1e-2 epoch 1 (30), draw 1 lr 1e-3 epoch 1 (40)
    assert select(seed, 'subset-2') == pytest.approx(35.)


def test_summarize_loss_against_full_validation_labels():
    results = {'an': {
        '0': runs({'0.001': [(50, 10, [1, 9], 40), (60, 5, [2, 1], 45)]}),
        '1': runs({'0.001': [(70, 10, [1, 1], 41), (60, 50, [2, 1], 47)]})}}
    table = summarize(results, ['an'])
    assert set(table) == {'full', 'observed', 'subset-2'}
    # full: 45 and 41; observed: 40 and 47
    assert table['full']['an']['mean'] == pytest.approx(43.)
    assert table['observed']['an']['mean'] == pytest.approx(43.5)
    assert table['observed']['an']['lost'] == pytest.approx(
        ((45 - 40) + (41 - 47)) / 2)
    assert table['full']['an']['lost'] == 0


def test_page_names_losses_and_order(tmp_path):
    from benchmark.pages.selection import write_page
    results = {
        'an': {'0': runs({'0.001': [(50, 10, [1, 9], 40),
                                    (60, 5, [2, 1], 45)]})},
        'grloss': {'0': runs({'0.001': [(50, 10, [1, 9], 44),
                                    (60, 5, [2, 1], 41)]})}}
    import matplotlib.pyplot as plt
    open_figures = plt.get_fignums()
    write_page(summarize(results, ['an', 'grloss']), str(tmp_path), 'cmd', 'T')
    assert plt.get_fignums() == open_figures  # its figure is closed
    table = (tmp_path / 'selection_table.md').read_text()
    # full: AN 45 > GR 41; observed picks epoch 1: GR 44 > AN 40
    assert '| full | 45.00 +- 0.00 (+0.00) | 41.00 +- 0.00 (+0.00) | ' \
        '0.00 | AN > GR |' in table
    assert '| observed | 40.00 +- 0.00 (-5.00) | 44.00 +- 0.00 (+3.00) | ' \
        '1.00 | GR > AN |' in table
    assert (tmp_path / 'selection.png').stat().st_size > 0
