"""benchmark.accuracy --suite: every method has its proxy configs,
and the learning-rate search reads validation mAP only."""
import json
import os
import os.path as osp
import sys

import numpy as np
import pytest

from spml_mm.apis import list_methods
from tests.conftest import REPO, dev_env
from benchmark import suites, training


@pytest.mark.parametrize('suite', ['proxy-voc', 'proxy-coco'])
@pytest.mark.parametrize('regime', ['linear', 'finetune'])
def test_every_method_has_a_config_in_every_suite(suite, regime):
    methods = suites.suite_methods(suite, regime)
    # AN, the full-label bound and every seed paper's recipe, no teacher
    assert {'an', 'full', *list_methods(kind='seed', variants=True)} <= set(
        methods)
    assert not set(methods) & set(list_methods(kind='teacher'))
    configs = {suites.suite_config(suite, m, regime) for m in methods}
    assert len(configs) == len(methods)
    for config in configs:
        assert osp.isfile(osp.join(REPO, config)), config
        assert suite[6:] in config and ('-linear' in config) == (
            regime == 'linear')


def test_a_suite_runs_only_the_methods_with_a_config_in_its_regime():
    """IGNORE masks the backbone's feature map: it has no linear-regime
    (cached features) config, so that regime leaves it out."""
    assert 'ignore' in suites.suite_methods('proxy-voc', 'finetune')
    assert 'ignore' not in suites.suite_methods('proxy-voc', 'linear')
    assert 'ignore' in suites.suite_methods('proxy-voc')


def test_a_method_without_proxy_configs_is_refused():
    with pytest.raises(ValueError, match=r'EPR has no proxy-voc \(linear\) '
                       r'config; its card \(configs/epr/metafile.yml\)'):
        suites.suite_config('proxy-voc', 'epr')


def test_a_reduced_proxy_has_its_own_folder_and_config_options():
    assert suites.proxy_root('proxy-voc') == 'data/proxy-voc'
    assert suites.proxy_root('proxy-voc', 0.2) == 'data/proxy-voc-f0.2'
    assert suites.proxy_options('proxy-voc') == []
    assert suites.proxy_options('demo', 0.5) == []
    assert suites.proxy_options('proxy-coco', 0.5) == [
        f'{loader}.dataset.data_root=data/proxy-coco-f0.5'
        for loader in ('train_dataloader', 'val_dataloader',
                       'test_dataloader')]


def test_demo_suite_keeps_the_demo_configs():
    assert suites.suite_config('demo', 'grloss') == \
        'configs/grloss/grloss_vgg11bn_demo.py'


def scalars(work_dir, stamp, *entries):
    """MMEngine's scalars of one training of ``work_dir``."""
    folder = work_dir / stamp / 'vis_data'
    folder.mkdir(parents=True)
    (folder / 'scalars.json').write_text(
        ''.join(json.dumps(e) + '\n' for e in entries))


def test_best_val_map_spans_a_run_and_its_resumption(tmp_path):
    train = dict(loss=0.7, epoch=1, iter=5, step=5)
    scalars(tmp_path, '20261126_100000', train,
            {'spml/mAP': 23.7861, 'step': 1}, {'spml/mAP': 26.18, 'step': 2})
    scalars(tmp_path, '20261126_110000', {'spml/mAP': 25.5, 'step': 3})
    assert training.best_val_map(str(tmp_path)) == 26.18


def test_selection_on_another_metric_key(tmp_path):
    scalars(tmp_path, '20261126_100000',
            {'spml/mAP_annotated': 80., 'spml/mAP_observed': 41.5},
            {'spml/mAP_annotated': 70., 'spml/mAP_observed': 43.25})
    assert training.best_val_map(str(tmp_path), 'spml/mAP_observed') == 43.25
    assert training.best_val_map(str(tmp_path), 'spml/mAP_annotated') == 80.
    with pytest.raises(ValueError):  # no spml/mAP in these scalars
        training.best_val_map(str(tmp_path))
    key = 'spml/mAP_observed'
    assert training.select_options('configs/an/an_vgg11bn_demo.py', key) == [
        f'default_hooks.checkpoint.save_best={key}']
    assert training.select_options(
        'configs/grloss/grloss_vgg11bn_demo.py', key) == [
            f'default_hooks.checkpoint.save_best={key}',
            f'default_hooks.early_stopping.monitor={key}']


def test_a_reduced_linear_proxy_reads_its_own_feature_cache():
    cache = 'data/proxy-voc-f0.2/features/efficientnet-lite0_128px.npz'
    assert suites.feature_cache('proxy-voc', 0.2) == cache
    assert suites.feature_cache('proxy-voc') == \
        'data/proxy-voc/features/efficientnet-lite0_128px.npz'
    # LASD's train pipeline loads the cache inside MultiView's two branches
    lasd = 'configs/lasd/efficientnet-lite0-linear_proxy-voc.py'
    options = suites.proxy_options('proxy-voc', 0.2, lasd)
    assert options[3:] == [
        f'train_dataloader.dataset.pipeline.0.transforms.{i}.0.cache_file='
        f'{cache}' for i in (0, 1)] + [
        f'{loader}_dataloader.dataset.pipeline.0.cache_file={cache}'
        for loader in ('val', 'test')]
    # the fine-tuned configs read images only
    assert suites.proxy_options(
        'proxy-voc', 0.2, 'configs/lasd/efficientnet-lite0_proxy-voc.py') == \
        suites.proxy_options('proxy-voc', 0.2)


def test_cache_options_reach_every_loader_through_train_py_parsing():
    """The options, parsed as tools/train.py parses them, leave no
    LoadCachedFeatures of the data loaders on the full proxy's cache."""
    import argparse

    from mmengine.config import Config, DictAction
    config = 'configs/lasd/efficientnet-lite0-linear_proxy-coco.py'
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    cfg = Config.fromfile(osp.join(REPO, config))
    cfg.merge_from_dict(parser.parse_args(
        ['--cfg-options', *suites.proxy_options('proxy-coco', 0.5, config)
         ]).cfg_options)
    text = str({k: cfg[k] for k in suites.LOADERS})
    assert 'data/proxy-coco/' not in text
    assert text.count("'data/proxy-coco-f0.5/features/") == 4
    assert text.count("'data/proxy-coco-f0.5'") == 3


@pytest.mark.slow
def test_fraction_is_refused_on_the_demo_suite():
    import subprocess
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmark.accuracy', '--suite', 'demo',
         '--fraction', '0.5'], cwd=REPO, capture_output=True, text=True,
        env=dev_env())
    assert proc.returncode == 2
    assert '--fraction applies to the proxy suites' in proc.stderr


@pytest.mark.slow
def test_an_interrupted_rate_search_run_resumes(tmp_path):
    """A rate-search run stopped after an epoch (a GPU command's deadline)
    is resumed by the next invocation, not started again: the second
    training begins at epoch 2, and the best validation mAP spans both
    trainings' scalars."""
    import glob
    import signal
    import subprocess
    import time

    from tests.conftest import PYTHON
    cmd = [PYTHON, '-m', 'benchmark.accuracy', '--suite', 'proxy-voc',
           '--regime', 'finetune', '--fraction', '0.01', '--methods', 'an',
           '--lr-search', '1e-3', '--out-dir', str(tmp_path), '--work-root',
           str(tmp_path / 'work'), '--cfg-options', 'train_cfg.max_epochs=8',
           'train_dataloader.dataset.indices=16']
    work = tmp_path / 'work' / 'proxy-voc_finetune-f0.01' / 'lr_search' / \
        'an' / 'lr0.001'
    proc = subprocess.Popen(cmd, cwd=REPO, start_new_session=True,
                            env=dev_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while not (work / 'last_checkpoint').is_file():
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = glob.glob(str(work / '*' / 'vis_data' / 'scalars.json'))
    assert len(first) == 1

    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True,
                   env=dev_env())
    found = json.loads((tmp_path / 'accuracy_proxy-voc_finetune-f0.01_'
                        'lr_search.json').read_text())['an']['0.001']
    runs = sorted(glob.glob(str(work / '*' / 'vis_data' / 'scalars.json')))
    assert len(runs) == 2 and first[0] == runs[0]
    entries = [list(map(json.loads, open(path))) for path in runs]
    vals = [[e for e in run if 'spml/mAP' in e] for run in entries]
    # resumed: trains from epoch 2, not from epoch 1 again
    assert min(e['epoch'] for e in entries[1] if 'loss' in e) == 2
    assert vals[1][-1]['step'] == 8
    assert found['val_mAP'] == max(e['spml/mAP'] for v in vals for e in v)
    assert 0 <= found['test_mAP'] <= 100
    # the evidence keeps its score matrices: the test ones give its mAP
    from spml_mm.evaluation import mean_average_precision
    prefix = str(tmp_path / found['scores'])
    with np.load(f'{prefix}_test.npz') as test, \
            np.load(f'{prefix}_val.npz') as val:
        assert mean_average_precision(
            test['scores'], test['known'] == 1) == \
            pytest.approx(found['test_mAP'], abs=1e-4)
        assert val['scores'].shape[1] == test['scores'].shape[1]
        assert len(val['scores']) != len(test['scores'])


def test_the_teacher_methods_run_only_when_named():
    """VLPL and AEVLP read a teacher's score file: no suite runs them by
    default; named, a proxy suite gives their config."""
    for suite in ('demo', 'proxy-voc'):
        assert not {'vlpl', 'aevlp'} & set(suites.suite_methods(suite))
    assert suites.suite_config('proxy-voc', 'aevlp', 'linear') == \
        'configs/aevlp/efficientnet-lite0-linear_proxy-voc.py'
    assert suites.suite_config('proxy-voc', 'vlpl', 'finetune') == \
        'configs/vlpl/efficientnet-lite0_proxy-voc.py'
