"""The documentation site (docs/, ``make docs``): its API reference lists
every class the plugin registers, its requirements are the ``docs`` extra,
and it builds without a warning."""
import os
import os.path as osp
import re
import subprocess
import sys

import pytest
from mmengine.registry import Registry

import spml_mm  # noqa: F401  (fills the registries)
from tests.conftest import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def registered_classes():
    """``module.Class`` of every spml_mm class in MMPretrain's and MMEngine's
    registries."""
    import mmengine.registry
    import mmpretrain.registry
    found = set()
    for module in (mmpretrain.registry, mmengine.registry):
        for name in dir(module):
            registry = getattr(module, name)
            if not isinstance(registry, Registry):
                continue
            for cls in registry.module_dict.values():
                if getattr(cls, '__module__', '').startswith('spml_mm'):
                    found.add(f'{cls.__module__}.{cls.__qualname__}')
    return found


def documented_classes():
    with open(osp.join(REPO, 'docs', 'api.md')) as f:
        return set(re.findall(r'^```\{autoclass\} (\S+)$', f.read(), re.M))


def test_api_reference_lists_every_registered_class():
    registered = registered_classes()
    assert 'spml_mm.models.losses.gr_loss.GRLoss' in registered
    assert len(registered) >= 40
    missing = registered - documented_classes()
    assert not missing, (
        f'add to docs/api.md: {", ".join(sorted(missing))}')


def test_api_reference_names_only_existing_classes():
    import importlib
    unregistered = documented_classes() - registered_classes()
    # beside the registered classes, only the apis' (used from Python)
    assert {c.rsplit('.', 2)[0] for c in unregistered} <= {'spml_mm.apis'}
    for name in unregistered:
        module, cls = name.rsplit('.', 1)
        assert isinstance(getattr(importlib.import_module(module), cls),
                          type), name


@pytest.mark.skipif(tomllib is None, reason='tomllib needs Python 3.11')
def test_docs_requirements_are_the_docs_extra():
    with open(osp.join(REPO, 'pyproject.toml'), 'rb') as f:
        extra = tomllib.load(f)['project']['optional-dependencies']['docs']
    with open(osp.join(REPO, 'docs', 'requirements.txt')) as f:
        listed = [line.strip() for line in f
                  if line.strip() and not line.startswith('#')]
    assert listed == extra


def test_no_reference_to_the_split_methods_page():
    """The methods page was split into docs/methods/*.md: no file names
    the old page."""
    tracked = subprocess.run(['git', 'ls-files'], cwd=REPO, text=True,
                             capture_output=True).stdout.split()
    if not tracked:
        pytest.skip('not a git checkout')
    stale = []
    for path in tracked:
        if not path.endswith(('.py', '.md', '.yml', '.sh', '.txt', '.toml')):
            continue
        full = osp.join(REPO, path)
        if not osp.isfile(full):
            continue
        with open(full, errors='replace') as f:
            if 'docs/' + 'methods.md' in f.read():
                stale.append(path)
    assert not stale


@pytest.mark.slow
def test_docs_build_without_a_warning(tmp_path):
    pytest.importorskip('myst_parser')
    pytest.importorskip('furo')
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b',
         'html', osp.join(REPO, 'docs'), str(tmp_path / 'html')],
        cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / 'html' / 'api.html').is_file()
    assert (tmp_path / 'html' / 'user_guides' / 'datasets.html').is_file()


def test_readme_is_short_and_starts_with_what_a_newcomer_runs():
    with open(osp.join(REPO, 'README.md')) as f:
        lines = f.read().splitlines()
    assert len(lines) <= 250
    first_screen = '\n'.join(lines[:40])
    assert 'python tools/train.py configs/grloss/resnet50_voc.py' in \
        first_screen
    assert 'bash tools/dist_train.sh configs/grloss/resnet50_voc.py 8' in \
        first_screen
    text = '\n'.join(lines)
    for command in ('make demo', 'make test ', 'make test-all', 'make docs'):
        assert command in text, command


def test_readme_links_resolve():
    with open(osp.join(REPO, 'README.md')) as f:
        text = f.read()
    anchors = {re.sub(r'[^a-z0-9 -]', '', h.lower()).replace(' ', '-')
               for h in re.findall(r'^#+ (.+)$', text, re.M)}
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if target.startswith(('http://', 'https://')):
            continue
        if target.startswith('#'):
            assert target[1:] in anchors, target
        else:
            assert osp.exists(osp.join(REPO, target.split('#')[0])), target
