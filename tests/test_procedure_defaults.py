"""Every config's training procedure matches the documented defaults.

``docs/methods/procedure.md`` lists, per config, the optimizer, learning
rate, the head's learning-rate multiplier, batch size, epochs, stopping rule
and the classifier's initialisation; this test reads those tables and the configs and
fails when either drifts. It also holds every config to what its release
does (the method card's ``Procedure``), so a table edit cannot silently move
a method away from its release.
"""
import glob
import os.path as osp
import re

import pytest
from mmengine.config import Config

from spml_mm.apis import get_method
from tests.conftest import REPO

CONFIGS = sorted(
    osp.relpath(p, REPO)
    for p in glob.glob(osp.join(REPO, 'configs', '*', '*.py'))
    if '_base_' not in p)
COLUMNS = ('optimizer', 'lr', 'head lr', 'batch', 'epochs', 'stopping',
           'init')


def documented():
    """{config: {column: value}} from the tables of
    docs/methods/procedure.md."""
    with open(osp.join(REPO, 'docs', 'methods', 'procedure.md')) as f:
        text = f.read()
    rows = {}
    for line in text.splitlines():
        m = re.match(r'\| `(configs/[^`]+\.py)` \|(.*)\|\s*$', line)
        if m:
            cells = [c.strip() for c in m.group(2).split('|')]
            assert m.group(1) not in rows, f'{m.group(1)} listed twice'
            rows[m.group(1)] = dict(zip(COLUMNS, cells))
    return rows


def procedure(path):
    """The same columns, read from the resolved config."""
    cfg = Config.fromfile(osp.join(REPO, path))
    optim = cfg.optim_wrapper
    keys = optim.get('paramwise_cfg', {}).get('custom_keys', {})
    mult = keys.get('head', {}).get('lr_mult', 1.)
    hooks = [*cfg.default_hooks.values(), *cfg.custom_hooks]
    stops = [h for h in hooks if h and h['type'] == 'SPMLEarlyStoppingHook']
    assert len(stops) <= 1, path
    if not stops:
        stopping = 'none'
    elif stops[0].get('max_drop') is None:
        stopping = 'no new best'
    else:
        stopping = f'drop > {stops[0]["max_drop"]:g}'
    init = cfg.model.head.get('init_cfg')
    return dict(
        optimizer=optim.optimizer.type,
        lr=f'{optim.optimizer.lr:g}',
        **{'head lr': f'x{mult:g}'},
        batch=str(cfg.train_dataloader.batch_size),
        epochs=str(cfg.train_cfg.max_epochs),
        stopping=stopping,
        init='torch default' if init is None else init['type'])


def test_every_config_is_documented_once():
    assert sorted(documented()) == CONFIGS


@pytest.mark.parametrize('path', CONFIGS)
def test_config_follows_its_documented_procedure(path):
    assert procedure(path) == documented()[path]


@pytest.mark.parametrize('path', CONFIGS)
def test_procedure_is_the_release(path):
    release = get_method(path.split('/')[1]).procedure
    head_lr, stopping = release['Head LR'], release['Stopping']
    if path.endswith('_demo.py'):
        head_lr = 'x1'  # from scratch: one rate for every method
    found = procedure(path)
    assert (found['head lr'], found['stopping']) == (head_lr, stopping)
    assert found['init'] == 'torch default'
    if path.startswith('configs/em') and path.endswith('_cub.py'):
        assert found['lr'] == '0.0001'  # the EM + APL release on CUB
