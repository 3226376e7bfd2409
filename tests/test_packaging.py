"""The package as users install it: version, supported ranges, the ``.mim``
layout, ``spml_mm::`` config inheritance and ``mim search``.

The wheel is built from a copy of the repository (the build writes
``spml_mm/.mim`` into its source tree) and installed into a temporary
folder; the checks run in subprocesses started in another directory, with
that folder first on ``PYTHONPATH``, so they see the installed package and
not the checkout.
"""
import importlib.util
import json
import os
import os.path as osp
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import spml_mm
from spml_mm.version import (MMENGINE_VERSION_RANGE, MMPRETRAIN_VERSION_RANGE,
                             __version__)
from tests.conftest import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

#: A user's config outside the repository: a packaged recipe as its base,
#: the plugin imported by name, one value changed.
USER_CONFIG = """\
_base_ = ['spml_mm::grloss/resnet50_voc.py']
custom_imports = dict(imports=['spml_mm'], allow_failed_imports=False)
train_cfg = dict(max_epochs=4)
"""

#: Parses USER_CONFIG and builds a demo model through the runner's
#: registries, as tools/train.py does, then prints what the test checks.
CHECK = """\
import json, os.path as osp, sys
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope, MODELS
import spml_mm
cfg = Config.fromfile('user.py')
demo = Config.fromfile('demo.py')
DefaultScope.get_instance('check', scope_name=demo.default_scope)
model = MODELS.build(demo.model)
logits = model(torch.zeros(2, 3, 48, 48), mode='tensor')
print(json.dumps(dict(
    package=osp.dirname(spml_mm.__file__),
    version=spml_mm.__version__,
    head=cfg.model.head.type, loss=cfg.model.head.loss.type,
    w=cfg.model.head.loss.w, max_epochs=cfg.train_cfg.max_epochs,
    lr=cfg.optim_wrapper.optimizer.lr,
    data_root=cfg.train_dataloader.dataset.data_root,
    demo_head=type(model.head).__name__,
    demo_loss=type(model.head.loss_module).__name__,
    logits=list(logits.shape))))
"""


def tracked_copy(dest):
    """The repository's files (tracked or new, not ignored) copied to dest.
    """
    names = subprocess.run(
        ['git', 'ls-files', '--cached', '--others', '--exclude-standard'],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True).stdout.split('\n')
    for name in filter(None, names):
        source = osp.join(REPO, name)
        if not osp.isfile(source):  # deleted in the working tree
            continue
        os.makedirs(osp.dirname(osp.join(dest, name)), exist_ok=True)
        shutil.copy2(source, osp.join(dest, name))
    return dest


def run(args, cwd, pythonpath):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    proc = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f'{args}:\n{proc.stdout}\n{proc.stderr}'
    return proc.stdout


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """A wheel built from the repository, installed into a folder."""
    source = tracked_copy(str(tmp_path_factory.mktemp('source')))
    wheels = str(tmp_path_factory.mktemp('wheels'))
    target = str(tmp_path_factory.mktemp('site'))
    pip = [sys.executable, '-m', 'pip']
    run(pip + ['wheel', '--no-deps', '--no-build-isolation', '-q', '-w',
               wheels, source], source, '')
    wheel = [osp.join(wheels, n) for n in os.listdir(wheels)]
    assert len(wheel) == 1 and osp.basename(wheel[0]).startswith(
        f'spml_mm-{__version__}-'), wheel
    run(pip + ['install', '--no-deps', '-q', '--target', target, wheel[0]],
        source, '')
    return target


def write_user_configs(folder):
    with open(osp.join(folder, 'user.py'), 'w') as f:
        f.write(USER_CONFIG)
    with open(osp.join(folder, 'demo.py'), 'w') as f:
        f.write("_base_ = ['spml_mm::grloss/grloss_vgg11bn_demo.py']\n")
    with open(osp.join(folder, 'check.py'), 'w') as f:
        f.write(CHECK)


def check_resolution(package_dir, folder, pythonpath):
    write_user_configs(folder)
    out = run([sys.executable, 'check.py'], folder, pythonpath)
    result = json.loads(out.strip().splitlines()[-1])
    assert osp.realpath(result['package']) == osp.realpath(package_dir)
    # the base's values arrive, the user's override wins
    assert result['head'] == 'SPMLLinearClsHead'
    assert result['loss'] == 'GRLoss' and result['w'] == [0., 2.]
    assert result['max_epochs'] == 4 and result['lr'] == 1e-5
    assert result['data_root'] == 'data/voc'
    # components marked with the spml_mm scope build through the runner's
    # registries
    assert result['demo_head'] == 'SPMLLinearClsHead'
    assert result['demo_loss'] == 'GRLoss' and result['logits'] == [2, 10]
    return result


def test_version_is_written_once():
    with open(osp.join(REPO, 'pyproject.toml')) as f:
        text = f.read()
    assert 'dynamic = ["version"]' in text
    assert 'version = {attr = "spml_mm.version.__version__"}' in text
    assert not re.search(r'^version\s*=\s*"', text, re.M)
    assert spml_mm.__version__ == __version__
    assert spml_mm.version_info == tuple(map(int, __version__.split('.')))


@pytest.mark.skipif(tomllib is None, reason='needs tomllib (Python 3.11)')
def test_dependencies_state_the_checked_ranges():
    with open(osp.join(REPO, 'pyproject.toml'), 'rb') as f:
        deps = tomllib.load(f)['project']['dependencies']
    for name, (low, high) in (('mmpretrain', MMPRETRAIN_VERSION_RANGE),
                              ('mmengine', MMENGINE_VERSION_RANGE)):
        assert f'{name}>={low},<{high}' in deps, deps


def test_version_check_names_the_range():
    spml_mm.check_version('mmpretrain', '1.2.0', ('1.2.0', '2.0.0'))
    spml_mm.check_version('mmpretrain', '1.9.9', ('1.2.0', '2.0.0'))
    for bad in ('1.1.0', '2.0.0', '2.1.0rc1'):
        with pytest.raises(ImportError) as err:
            spml_mm.check_version('mmpretrain', bad, ('1.2.0', '2.0.0'))
        assert str(err.value) == (
            f'spml-mm {__version__} supports mmpretrain>=1.2.0,<2.0.0, but '
            f'mmpretrain=={bad} is installed; install a supported version, '
            'e.g. pip install "mmpretrain>=1.2.0,<2.0.0".')


@pytest.mark.slow
def test_wheel_carries_the_mim_layout(installed):
    mim = osp.join(installed, 'spml_mm', '.mim')
    for name in ('model-index.yml', 'configs/grloss/resnet50_voc.py',
                 'configs/_base_/default_runtime.py',
                 'configs/an/metafile.yml', 'tools/train.py', 'tools/test.py'):
        path = osp.join(mim, name)
        assert osp.isfile(path) and not osp.islink(path), name
    # only the user tools ship: the apparatus stays in .dev_scripts
    for name in ('tools/benchmark', 'tools/analysis', 'tools/docs_tables.py',
                 '.dev_scripts'):
        assert not osp.exists(osp.join(mim, name)), name
    assert not osp.exists(osp.join(installed, 'benchmark'))
    with open(osp.join(mim, 'configs', 'grloss', 'resnet50_voc.py')) as f, \
            open(osp.join(REPO, 'configs', 'grloss', 'resnet50_voc.py')) as g:
        assert f.read() == g.read()


@pytest.mark.slow
def test_installed_tools_run_from_another_directory(installed, tmp_path):
    """The packaged entry points import what they share and the proxy
    generator from the installed package; the wheel adds no top-level
    ``tools`` package."""
    assert not osp.exists(osp.join(installed, 'tools'))
    tools = osp.join(installed, 'spml_mm', '.mim', 'tools')
    out = run([sys.executable, osp.join(tools, 'train.py'), '--help'],
              str(tmp_path), installed)
    assert '--cfg-options' in out and '--resume-weights-only' in out
    out = run([
        sys.executable,
        osp.join(tools, 'make_proxy_data.py'), '--like', 'voc', '--fraction',
        '0.001', '--image-size', '16', '--out-dir', 'proxy'
    ], str(tmp_path), installed)
    assert 'voc-like proxy, fraction 0.001: 10 + 10 images' in out
    labels = np.load(tmp_path / 'proxy' / 'formatted_train_labels.npy')
    assert labels.shape == (10, 20)


@pytest.mark.slow
def test_installed_package_resolves_spml_mm_bases(installed, tmp_path):
    check_resolution(osp.join(installed, 'spml_mm'), str(tmp_path), installed)


@pytest.mark.slow
def test_checkout_resolves_spml_mm_bases(tmp_path):
    """An editable install or a checkout on PYTHONPATH: setup.py links the
    configs into spml_mm/.mim, and MMEngine finds them through the imported
    package."""
    source = tracked_copy(str(tmp_path / 'checkout'))
    spec = importlib.util.spec_from_file_location(
        'spml_setup', osp.join(source, 'setup.py'))
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    setup.add_mim_extension('link')
    assert osp.islink(osp.join(source, 'spml_mm', '.mim', 'configs'))
    user = tmp_path / 'user'
    user.mkdir()
    check_resolution(osp.join(source, 'spml_mm'), str(user), source)


@pytest.mark.slow
def test_mim_search_lists_the_metafile_models(installed, tmp_path):
    pytest.importorskip('mim')
    out = run([sys.executable, '-m', 'mim', 'search', 'spml_mm'],
              str(tmp_path), installed)
    for model in ('grloss_resnet50_voc', 'em_apl_resnet50_coco',
                  'lasd_vgg11bn_demo', 'opml_resnet50_cub', 'an_resnet50_voc'):
        assert model in out, out[-3000:]


def test_mim_finds_every_demo_config_by_its_file_name():
    # mim train/test look a packaged config up by its base name alone
    names = {}
    for folder, _, files in os.walk(osp.join(REPO, 'configs')):
        for name in files:
            names.setdefault(name, []).append(osp.join(folder, name))
    demos = [n for n in names if n.endswith('_demo.py')
             and not any('_base_' in p for p in names[n])]
    assert 'grloss_vgg11bn_demo.py' in demos and len(demos) >= 13
    for name in demos:
        assert len(names[name]) == 1, names[name]
        method = osp.basename(osp.dirname(names[name][0]))
        assert name.startswith(method + '_vgg11bn'), name
