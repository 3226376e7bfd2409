"""tools/benchmark/accuracy.py --suite: every method has its proxy configs,
and the learning-rate search reads validation mAP only."""
import os.path as osp
import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, osp.join(REPO, 'tools', 'benchmark'))
import accuracy  # noqa: E402


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


@pytest.mark.parametrize('args', [['--suite', 'demo'],
                                  ['--suite', 'proxy-voc']])
def test_fraction_is_refused_outside_the_fine_tuned_proxies(args):
    import subprocess
    proc = subprocess.run(
        [sys.executable, 'tools/benchmark/accuracy.py', *args,
         '--fraction', '0.5'], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2
    assert '--fraction applies to the proxy suites in the finetune regime' \
        in proc.stderr
