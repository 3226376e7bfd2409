"""tools.benchmark.accuracy --suite: every method has its proxy configs,
and the learning-rate search reads validation mAP only."""
import os.path as osp
import sys

import pytest

from tests.conftest import REPO
from tools.benchmark import accuracy


@pytest.mark.parametrize('suite', ['proxy-voc', 'proxy-coco'])
@pytest.mark.parametrize('regime', ['linear', 'finetune'])
def test_every_method_has_a_config_in_every_suite(suite, regime):
    methods = accuracy.suite_methods(suite)
    assert {'an', 'full', 'gr', 'em', 'em_apl', 'lasd', 'opml',
            'opml_sp'} == set(methods)
    configs = {accuracy.suite_config(suite, m, regime) for m in methods}
    assert len(configs) == len(methods)
    for config in configs:
        assert osp.isfile(osp.join(REPO, config)), config
        assert suite[6:] in config and ('-linear' in config) == (
            regime == 'linear')


def test_a_method_without_proxy_configs_is_refused():
    with pytest.raises(ValueError, match='EPR has no proxy-voc config'):
        accuracy.suite_config('proxy-voc', 'epr')


def test_a_reduced_proxy_has_its_own_folder_and_config_options():
    assert accuracy.proxy_root('proxy-voc') == 'data/proxy-voc'
    assert accuracy.proxy_root('proxy-voc', 0.2) == 'data/proxy-voc-f0.2'
    assert accuracy.proxy_options('proxy-voc') == []
    assert accuracy.proxy_options('demo', 0.5) == []
    assert accuracy.proxy_options('proxy-coco', 0.5) == [
        f'{loader}.dataset.data_root=data/proxy-coco-f0.5'
        for loader in ('train_dataloader', 'val_dataloader',
                       'test_dataloader')]


def test_demo_suite_keeps_the_demo_configs():
    assert accuracy.suite_config('demo', 'gr') == \
        'configs/grloss/grloss_vgg11bn_demo.py'


def test_best_val_map_ignores_the_test_lines():
    log = ('Epoch(val) [1][18/18]    spml/mAP: 23.7861  data_time: 0.03\n'
           'Epoch(val) [2][18/18]    spml/mAP: 26.1830  data_time: 0.02\n'
           'Epoch(test) [91/91]    spml/mAP: 99.0000\n')
    assert accuracy.best_val_map(log) == 26.183


def test_selection_on_another_metric_key():
    log = ('Epoch(val) [1][2/2]    spml/mAP_annotated: 80.0000  '
           'spml/mAP_observed: 41.5000  data_time: 0.03\n'
           'Epoch(val) [2][2/2]    spml/mAP_annotated: 70.0000  '
           'spml/mAP_observed: 43.2500  data_time: 0.02\n')
    assert accuracy.best_val_map(log, 'spml/mAP_observed') == 43.25
    assert accuracy.best_val_map(log, 'spml/mAP_annotated') == 80.
    with pytest.raises(ValueError):  # no spml/mAP in this log
        accuracy.best_val_map(log)
    key = 'spml/mAP_observed'
    assert accuracy.select_options('configs/an/an_vgg11bn_demo.py', key) == [
        f'default_hooks.checkpoint.save_best={key}']
    assert accuracy.select_options(
        'configs/grloss/grloss_vgg11bn_demo.py', key) == [
            f'default_hooks.checkpoint.save_best={key}',
            f'default_hooks.early_stopping.monitor={key}']


def test_a_reduced_linear_proxy_reads_its_own_feature_cache():
    cache = 'data/proxy-voc-f0.2/features/efficientnet-lite0_128px.npz'
    assert accuracy.feature_cache('proxy-voc', 0.2) == cache
    assert accuracy.feature_cache('proxy-voc') == \
        'data/proxy-voc/features/efficientnet-lite0_128px.npz'
    # LASD's train pipeline loads the cache inside MultiView's two branches
    lasd = 'configs/lasd/efficientnet-lite0-linear_proxy-voc.py'
    options = accuracy.proxy_options('proxy-voc', 0.2, lasd)
    assert options[3:] == [
        f'train_dataloader.dataset.pipeline.0.transforms.{i}.0.cache_file='
        f'{cache}' for i in (0, 1)] + [
        f'{loader}_dataloader.dataset.pipeline.0.cache_file={cache}'
        for loader in ('val', 'test')]
    # the fine-tuned configs read images only
    assert accuracy.proxy_options(
        'proxy-voc', 0.2, 'configs/lasd/efficientnet-lite0_proxy-voc.py') == \
        accuracy.proxy_options('proxy-voc', 0.2)


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
        ['--cfg-options', *accuracy.proxy_options('proxy-coco', 0.5, config)
         ]).cfg_options)
    text = str({k: cfg[k] for k in accuracy.LOADERS})
    assert 'data/proxy-coco/' not in text
    assert text.count("'data/proxy-coco-f0.5/features/") == 4
    assert text.count("'data/proxy-coco-f0.5'") == 3


@pytest.mark.slow
def test_fraction_is_refused_on_the_demo_suite():
    import subprocess
    proc = subprocess.run(
        [sys.executable, '-m', 'tools.benchmark.accuracy', '--suite', 'demo',
         '--fraction', '0.5'], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2
    assert '--fraction applies to the proxy suites' in proc.stderr
