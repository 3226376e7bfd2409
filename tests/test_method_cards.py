"""The method cards (``configs/<key>/metafile.yml``): one per config folder,
true to the configs they name, and read by MMPretrain's model hub."""
import os
import os.path as osp

import mmpretrain
import pytest
import yaml
from mmengine.config import Config
from mmpretrain.registry import HOOKS, MODELS

from spml_mm.apis import get_method, list_methods
from spml_mm.apis.methods import KINDS
from tests.conftest import REPO

FOLDERS = sorted(
    d for d in os.listdir(osp.join(REPO, 'configs'))
    if not d.startswith('_') and osp.isdir(osp.join(REPO, 'configs', d)))
ROWS = list_methods(variants=True)


def paths(method):
    for value in method.configs.values():
        yield from value.values() if isinstance(value, dict) else [value]


def test_every_config_folder_has_a_card_whose_key_is_the_folder():
    assert sorted(list_methods()) == FOLDERS
    index = yaml.safe_load(open(osp.join(REPO, 'model-index.yml')))
    assert sorted(index['Import']) == [
        f'configs/{f}/metafile.yml' for f in FOLDERS]
    for key in list_methods():
        assert get_method(key).folder == key
        assert get_method(key).variant_of is None


@pytest.mark.parametrize('key', ROWS)
def test_a_card_names_registered_parts_existing_configs_and_its_page(key):
    method = get_method(key)
    assert method.kind in KINDS
    assert MODELS.get(method.loss) is not None, method.loss
    if method.label_bank:
        assert MODELS.get(method.label_bank) is not None, method.label_bank
    for hook in method.hooks:
        assert HOOKS.get(hook) is not None, hook
    assert osp.isfile(osp.join(REPO, method.page)), method.page
    assert 'demo' in method.configs
    for path in paths(method):
        assert path.startswith(f'configs/{method.folder}/'), path
        assert osp.isfile(osp.join(REPO, path)), path


@pytest.mark.parametrize('key', ROWS)
def test_a_card_says_what_its_configs_build(key):
    """The demo config and the first dataset config (else a proxy one) use
    the card's loss and label bank and add its hooks."""
    method = get_method(key)
    checked = [method.configs['demo']]
    checked += [p for p in paths(method) if p != checked[0]][:1]
    for path in checked:
        cfg = Config.fromfile(osp.join(REPO, path))
        head = cfg.model.head
        assert head.loss.type == method.loss, path
        bank = head.get('label_bank') or {}
        assert bank.get('type') == method.label_bank, path
        hooks = {h['type'] for h in cfg.get('custom_hooks', [])}
        hooks |= {h['type'] for h in (cfg.get('default_hooks') or {}).values()
                  if h}
        assert set(method.hooks) <= hooks, path


def test_a_card_refuses_an_unknown_key_and_suite_with_what_exists():
    with pytest.raises(KeyError, match="no method 'gr'.*'grloss'"):
        get_method('gr')
    with pytest.raises(ValueError, match=r'AEVLP has no proxy-coco \(linear\) '
                       r'config; its card .* has: demo, proxy-voc '
                       r'\(linear/finetune\), voc'):
        get_method('aevlp').config('proxy-coco', 'linear')
    assert get_method('opml_sp').config('proxy-voc', 'linear') == \
        'configs/opml/efficientnet-lite0-linear-sp_proxy-voc.py'
    assert list_methods('ll_*') == ['ll_r', 'll_ct', 'll_cp']
    assert list_methods(kind='seed', variants=True) == [
        'grloss', 'em_apl', 'lasd', 'opml_sp']
    with pytest.raises(ValueError, match='kind must be one of'):
        list_methods(kind='teachers')


def test_mmpretrains_hub_lists_and_builds_the_plugins_models():
    demos = mmpretrain.list_models('*_demo')
    for key in ROWS:
        stem = osp.basename(get_method(key).configs['demo'])[:-3]
        assert stem in demos
    assert 'grloss_resnet50_voc' in mmpretrain.list_models('grloss_*')
    assert 'resnet50_8xb32_in1k' in mmpretrain.list_models('resnet50_*')
    model = mmpretrain.get_model('grloss_vgg11bn_demo')
    assert type(model.head.loss_module).__name__ == 'GRLoss'
    assert model.head.num_classes == 10
    assert model._config.filename.endswith(
        osp.join('configs', 'grloss', 'grloss_vgg11bn_demo.py'))


#: the pages whose method table names every method folder, and how a row
#: names it
METHOD_TABLES = {
    'README.md': 'configs/{}/README.md',
    'docs/methods/index.md': '`configs/{}/`',
    'docs/architecture.md': '{}/',
}


@pytest.mark.parametrize('page', METHOD_TABLES)
def test_every_method_is_in_the_docs_method_tables(page):
    """README's, the methods index's and the architecture's tables have a
    row naming each card's folder (and README links each card's page)."""
    with open(osp.join(REPO, page)) as f:
        rows = '\n'.join(line for line in f if line.startswith('| '))
    for key in list_methods():
        assert METHOD_TABLES[page].format(key) in rows, (page, key)
        if page == 'README.md':
            assert get_method(key).page in rows, (page, key)
