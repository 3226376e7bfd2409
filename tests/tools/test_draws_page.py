"""benchmark.draws: its page renders from its json alone, one section per
suite (mAP per method and draw with the change from the uniform draw, the
calibrations and what each rule changed), and a proxy suite's runs are
collected with the calibrations of its own data, ``largest`` included."""
import argparse
import json

import numpy as np
import pytest

from benchmark import draws
from benchmark.pages.draws import render

ROW = dict(method='an', label='AN', seed=0, seconds=1., m_true=2.06,
           m_est=1.9, prior_error=3.25, observed_min_class=4,
           conformal_recall=71.5, conformal_chosen_recall=81.,
           conformal_min_class_recall=60., pooled_recall=75.,
           pooled_chosen_recall=80.5)
SECTION = 'proxy-voc_linear-f0.2'


def suite(title, note, *rows):
    return dict(title=title, seeds=sorted({r['seed'] for r in rows}),
                note=note, conclusion='', rows={
                    f'{r["draw"]}/{r["method"]}/{r["seed"]}': r
                    for r in rows})


def test_each_suite_shows_each_draw_against_the_uniform_one():
    data = dict(suites={
        SECTION: suite(
            'VOC-like proxy', 'the proxy.',
            dict(ROW, draw='uniform', mAP=35.),
            dict(ROW, draw='largest', mAP=33.5, m_est=1.5,
                 conformal_recall=70., prior_error=5., pooled_recall=60.)),
        'demo': suite(
            'Demo dataset', 'one seed.',
            dict(ROW, draw='uniform', mAP=85.5),
            dict(ROW, draw='commonest', mAP=80.25)),
    })
    data['suites']['demo']['conclusion'] = 'AN lost.'
    page = render(data)
    # the demo first, then the proxy, each with its own draws
    assert page.index('## Demo dataset') < page.index('## VOC-like proxy')
    demo, proxy = page.split('## VOC-like proxy')
    assert '| method | uniform | commonest |' in demo
    assert '| AN | 85.50 | 80.25 (-5.25) |' in demo
    assert ('| AN | commonest | 2.06 | 1.90 | 3.25 | 4 | 71.5% / 81.0% | '
            '60.0% | 75.0% / 80.5% |') in demo
    assert 'Seed(s) 0; one seed.' in demo and 'AN lost.' in demo
    assert '| method | uniform | largest |' in proxy
    assert '| AN | 35.00 | 33.50 (-1.50) |' in proxy
    assert ('- `largest`: test mAP -1.50 points against the uniform draw '
            '(AN); class-prior error 3.25 -> 5.00 points') in proxy
    assert ('m estimated 1.90 -> 1.50 (true 2.06); pooled conformal '
            'recall on all test positives 75.0% -> 60.0%, on the chosen ones '
            '80.5% -> 80.5%; per-class conformal recall on all test '
            'positives 71.5% -> 70.0%') in proxy
    assert 'commonest' not in proxy and 'run by run' not in proxy
    del data['suites'][SECTION]['rows']['largest/an/0']['m_est']
    data['suites'][SECTION]['rows']['largest/an/0']['m_refused'] = 'why'
    page = render(data)
    assert '| AN | largest | 2.06 | refused: why | 5.00 | 4 | 70.0% / ' \
        '81.0% | 60.0% | 60.0% / 80.5% |' in page
    assert 'm estimated 1.90 -> refused (true 2.06)' in page


def test_several_seeds_show_means_and_paired_changes():
    data = dict(suites={SECTION: suite(
        'VOC-like proxy', 'two seeds.',
        dict(ROW, draw='uniform', mAP=35.),
        dict(ROW, draw='largest', mAP=33.5),
        dict(ROW, draw='uniform', mAP=36., seed=1),
        dict(ROW, draw='largest', mAP=37., seed=1),
        dict(ROW, draw='uniform', mAP=40., seed=2))})
    page = render(data)
    # largest: seeds 0 and 1 (mean 35.25), against their uniform runs
    assert '| AN | 37.00 | 35.25 (-0.25) |' in page
    assert ('- `largest`: test mAP -0.25 points against the uniform draw '
            '(AN), -1.50 to +1.00 run by run (2 runs); seed 0: class-prior '
            'error') in page
    assert "Seed 0's runs." in page


@pytest.fixture(scope='module')
def tiny_proxy(tmp_path_factory):
    from spml_mm.benchmarks.proxy import make_proxy_dataset
    root = tmp_path_factory.mktemp('proxy')
    make_proxy_dataset(str(root), 'voc', image_size=32, seed=0,
                       sizes=dict(train=60, val=20))
    return root


def test_a_proxy_suite_collects_its_runs_with_its_own_draws(
        tiny_proxy, tmp_path):
    import spml_mm  # noqa: F401
    from spml_mm.datasets import SPMLDataset
    from spml_mm.datasets.protocol import split_train_val
    salience = np.load(tiny_proxy / 'formatted_train_salience.npy')
    _, val_idx = split_train_val(len(salience))
    largest = draws.observed_val('largest', str(tiny_proxy))
    np.testing.assert_array_equal(largest.argmax(1),
                                  salience[val_idx].argmax(1))
    assert (largest.sum(1) == 1).all()
    uniform = draws.observed_val('uniform', str(tiny_proxy))
    assert (largest != uniform).any()

    val = SPMLDataset(str(tiny_proxy), split='val', pipeline=[])
    full = np.zeros((len(val), 20))
    for k in range(len(val)):
        full[k, val.get_data_info(k)['gt_label']] = 1
    test = np.load(tiny_proxy / 'formatted_val_labels.npy')
    rng = np.random.RandomState(0)
    args = argparse.Namespace(
        suite='proxy-voc', section=SECTION, work_root=str(tmp_path),
        draws=['largest'], seeds=[0], uniform_from=None,
        data_root=str(tiny_proxy))
    for draw, mAP in (('uniform', 30.), ('largest', 28.)):
        out = tmp_path / draw
        (out / 'scores' / f'accuracy_{SECTION}').mkdir(parents=True)
        with open(out / f'accuracy_{SECTION}.json', 'w') as f:
            json.dump(dict(an=dict({'0': dict(mAP=mAP, seconds=1.)})), f)
        for part, labels in (('val', full), ('test', test)):
            np.savez(out / 'scores' / f'accuracy_{SECTION}' /
                     f'an_seed0_{part}.npz',
                     scores=labels + rng.rand(*labels.shape),
                     known=np.where(labels == 1, 1, -1))
    rows = draws.collect(args)
    assert sorted(rows) == ['largest/an/0', 'uniform/an/0']
    for key, mAP in (('uniform/an/0', 30.), ('largest/an/0', 28.)):
        assert rows[key]['mAP'] == mAP
        assert rows[key]['m_true'] == pytest.approx(full.sum(1).mean())
        # a dozen validation images leave classes unobserved: refused
        assert rows[key]['observed_min_class'] == 0
        assert rows[key]['m_refused'].endswith('classes have fewer than 1')
        assert 'conformal_refused' in rows[key]
        assert 0 < rows[key]['pooled_recall'] <= 100
    # the test positives a draw chooses, as it chose the validation ones
    chosen = draws.chosen_test(test == 1, 'largest', str(tiny_proxy))
    test_salience = np.load(tiny_proxy / 'formatted_val_salience.npy')
    np.testing.assert_array_equal(chosen.argmax(1), test_salience.argmax(1))
    assert (chosen.sum(1) == 1).all()
    # by the validation draw's key: the official train split's frequencies
    frequency = np.load(tiny_proxy / 'formatted_train_labels.npy').sum(0)
    for draw, best in (('commonest', np.max), ('rarest', np.min)):
        chosen = draws.chosen_test(test == 1, draw, str(tiny_proxy))
        for row, kept in zip(test, chosen.argmax(1)):
            assert frequency[kept] == best(frequency[row == 1])
    # the priors read the observed positives of each draw: m n_k / N
    m = full.sum(1).mean()
    for draw, observed in (('uniform', uniform), ('largest', largest)):
        error = 100 * np.abs(m * observed.mean(0) - full.mean(0)).mean()
        assert rows[f'{draw}/an/0']['prior_error'] == pytest.approx(error)


def test_a_proxy_suite_trains_at_its_searched_rates(tmp_path, monkeypatch):
    searched = dict(an={'0.001': dict(val_mAP=30.), '0.01': dict(val_mAP=31.)})
    with open(tmp_path / f'accuracy_{SECTION}_lr_search.json', 'w') as f:
        json.dump(searched, f)
    monkeypatch.setattr(draws, 'RESULTS_DIR', str(tmp_path))
    args = argparse.Namespace(suite='proxy-voc', section=SECTION)
    assert draws.lr_options(args, 'an') == ['optim_wrapper.optimizer.lr=0.01']
    assert draws.lr_options(args, 'vlpl') == []  # not searched: its config's
    assert draws.lr_options(argparse.Namespace(suite='demo'), 'an') == []
