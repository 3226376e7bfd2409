"""benchmark.accuracy: the table with an earlier run beside it."""
import multiprocessing
import os.path as osp
import sys

import pytest

from tests.conftest import REPO, dev_env
from benchmark import accuracy, training
from benchmark.pages import accuracy as accuracy_page


def runs(*maps):
    return {str(seed): dict(mAP=m, seconds=10.) for seed, m in enumerate(maps)}


def test_comparison_columns_give_the_change_of_the_mean(tmp_path):
    now = accuracy_page.summarize(
        dict(an=runs(80., 82.), full=runs(96., 96.), grloss=runs(93., 95.)),
        ['an', 'full', 'grloss'])
    before = accuracy_page.summarize(
        dict(an=runs(79., 79.), full=runs(95., 97.)), ['an', 'full', 'grloss'])
    import matplotlib.pyplot as plt
    open_figures = plt.get_fignums()
    accuracy_page.write_outputs(now, str(tmp_path), 'cmd', False,
                                ('old defaults', before))
    assert plt.get_fignums() == open_figures  # its figure is closed
    text = (tmp_path / 'accuracy.md').read_text()
    assert ('| method | test mAP (%) | spread (std) | seeds | share of '
            'AN-to-full gap closed | training time (s) | old defaults (%) | '
            'change |') in text
    # AN: 81 +- 1 now, 79 +- 0 before; GR has no earlier run
    assert '| AN | 81.00 | 1.00 | 2 | 0% | 10 | 79.00 +- 0.00 | +2.00 |' \
        in text
    assert '| GR | 94.00 | 1.00 | 2 | 87% | 10 | - | - |' in text
    assert (tmp_path / 'accuracy.png').is_file()


def page(results, tmp_path):
    """The seeds page of the results json ``results``."""
    accuracy_page.write_outputs(
        accuracy_page.summarize(results, list(results)), str(tmp_path),
        'cmd', False, output='x', runs=results)
    return (tmp_path / 'x.md').read_text()


def test_searched_rates_are_each_methods_best_validation_map(tmp_path):
    found = {'an': {'0.0001': dict(val_mAP=30.), '0.001': dict(val_mAP=36.),
                    '0.01': dict(val_mAP=35.)},
             'opml': {'0.01': dict(val_mAP=20.), '0.1': dict(val_mAP=21.)},
             'grloss': {}}
    assert accuracy_page.chosen_lrs(found) == {'an': 1e-3, 'opml': 0.1}
    results = dict(an={'0': dict(mAP=80., seconds=1., lr=1e-3)},
                   full={'0': dict(mAP=90., seconds=1.)},
                   opml={'0': dict(mAP=85., seconds=1., lr=0.1)})
    assert ("Learning rates, each method's best validation mAP of "
            '`x_lr_search.md`: AN 0.001; OPML 0.1.') in page(results, tmp_path)


def test_the_page_counts_the_runs_trained_compiled(tmp_path):
    compiled = ['compile.backend=cudagraphs', 'default_hooks.x=False']
    results = dict(an={'0': dict(mAP=80., seconds=1., options=compiled),
                       '1': dict(mAP=81., seconds=1., options=[])},
                   full={'0': dict(mAP=90., seconds=1.)})
    assert ('1 of 3 runs trained with the train step compiled '
            '(`compile.backend=cudagraphs`), the rest eagerly') in page(
                results, tmp_path)
    del results['an']['0']
    assert 'compiled' not in page(results, tmp_path)


@pytest.mark.slow
def test_searched_lr_needs_a_search_of_every_method(tmp_path):
    import json
    import subprocess
    (tmp_path / 'accuracy_proxy-voc_linear_lr_search.json').write_text(
        json.dumps({'an': {'0.001': dict(val_mAP=36.)}}))
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmark.accuracy', '--suite',
         'proxy-voc', '--methods', 'an', 'grloss', '--searched-lr',
         '--out-dir', str(tmp_path)], cwd=REPO, capture_output=True, text=True,
        env=dev_env())
    assert proc.returncode == 2
    assert '--searched-lr: grloss not in' in proc.stderr
    assert 'run --lr-search first' in proc.stderr


def test_record_keeps_the_runs_another_invocation_wrote(tmp_path):
    import json
    path = str(tmp_path / 'results.json')
    training.record(path, 'an', '0', dict(mAP=1.))
    # a second invocation (e.g. LASD run in parallel) writes meanwhile
    with open(path) as f:
        other = json.load(f)
    other['lasd'] = {'1': dict(mAP=2.)}
    with open(path, 'w') as f:
        json.dump(other, f)
    merged = training.record(path, 'an', '1', dict(mAP=3.))
    assert merged == {'an': {'0': dict(mAP=1.), '1': dict(mAP=3.)},
                      'lasd': {'1': dict(mAP=2.)}}
    with open(path) as f:
        assert json.load(f) == merged
    assert not osp.exists(path + '.tmp')


def record_runs(path, method):
    for seed in range(30):
        training.record(path, method, str(seed), dict(mAP=float(seed)))


def test_records_of_invocations_side_by_side_are_all_kept(tmp_path):
    """Four processes recording into one json at once (GPU runs side by
    side finishing together): no run lost, the file whole."""
    import json
    path = str(tmp_path / 'results.json')
    with multiprocessing.get_context('fork').Pool(4) as pool:
        pool.starmap(record_runs, [(path, f'm{i}') for i in range(4)])
    with open(path) as f:
        found = json.load(f)
    assert found == {f'm{i}': {str(s): dict(mAP=float(s)) for s in range(30)}
                     for i in range(4)}


def test_search_table_holds_every_invocations_methods_and_rates(tmp_path):
    """One invocation per method, each with its optimizer's grid: the table
    any of them writes lists both methods over the union of the rates."""
    import argparse
    import json
    found = {'an': {'1e-05': dict(val_mAP=50.), '0.0001': dict(val_mAP=60.)},
             'opml': {'0.0001': dict(val_mAP=40.), '0.01': dict(val_mAP=55.)}}
    (tmp_path / 'x_lr_search.json').write_text(json.dumps(found))
    args = argparse.Namespace(
        methods=['an'], lr_search=[1e-5, 1e-4], rerun=False, seeds=[0],
        suite='proxy-voc', regime='finetune', fraction=1., cfg_options=[],
        select_metric='spml/mAP')
    accuracy.lr_search(args, 'x', str(tmp_path), str(tmp_path), 'T')
    table = (tmp_path / 'x_lr_search.md').read_text()
    assert ('| method | config | lr 1e-05 | lr 0.0001 | lr 0.01 | chosen | '
            'in the grid |') in table
    # each method's best is the highest of its own rates
    assert '| 50.00 | 60.00 | - | 0.0001 | top edge |' in table
    assert '| - | 40.00 | 55.00 | 0.01 | top edge |' in table
    assert '(seed 0; the test set is not used)' in table  # untested runs
    found['an']['0.0001']['test_mAP'] = 58.
    (tmp_path / 'x_lr_search.json').write_text(json.dumps(found))
    accuracy.lr_search(args, 'x', str(tmp_path), str(tmp_path), 'T')
    assert ("where a search run was tested, the chosen rate's run is seed 0 "
            'of the seeds table') in (tmp_path / 'x_lr_search.md').read_text()


def test_the_page_says_whether_the_chosen_rate_is_interior():
    def runs(*maps):
        return {lr: dict(val_mAP=m)
                for lr, m in zip(('1e-05', '0.0001', '0.001'), maps)}

    assert accuracy_page.grid_position(runs(53., 84., 85.)) == 'top edge'
    assert accuracy_page.grid_position(runs(86., 84., 85.)) == 'bottom edge'
    assert accuracy_page.grid_position(runs(53., 85., 84.)) == 'interior'
    assert accuracy_page.grid_position(runs(53.)) == 'one rate'
    # the rates' order, not the json's: 0.003 beyond 0.001
    assert accuracy_page.grid_position(
        {'0.003': dict(val_mAP=84.), **runs(53., 84., 85.)}) == 'interior'


def test_the_chosen_rates_search_run_is_the_seed_it_trained():
    """--searched-lr records the rate search's run at the chosen rate as
    the seed it trained, only where that run is the same training (seed,
    --cfg-options, selection metric) and was tested."""
    run = dict(val_mAP=80., seconds=9., seed=0, options=['a=1'],
               select_metric='spml/mAP', test_mAP=77.)
    found = {'an': {'0.001': run, '0.0001': dict(run, val_mAP=70.,
                                                 test_mAP=90.)}}
    assert training.searched_run(found, 'an', 0, ['a=1'],
                                 'spml/mAP') is run
    for seed, options, metric in [(1, ['a=1'], 'spml/mAP'),
                                  (0, [], 'spml/mAP'),
                                  (0, ['a=1'], 'spml/mAP_observed')]:
        assert training.searched_run(found, 'an', seed, options,
                                     metric) is None
    assert training.searched_run(found, 'grloss', 0, ['a=1'],
                                 'spml/mAP') is None
    del run['test_mAP']  # a search of before the test pass
    assert training.searched_run(found, 'an', 0, ['a=1'], 'spml/mAP') is None
