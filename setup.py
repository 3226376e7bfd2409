"""Build script: the project's metadata is in pyproject.toml; this file adds
OpenMMLab's ``.mim`` layout to the package.

``mim`` and MMEngine's ``spml_mm::`` config inheritance look for the configs,
tools and model index under ``spml_mm/.mim/``. Building a wheel or an sdist
(``pip install .``) copies ``configs/``, ``tools/`` and ``model-index.yml``
there, so an installed package carries them; an editable install
(``pip install -e .``) links them instead, so edits to the configs show at
once. ``spml_mm/.mim`` is generated and ignored by git.
"""
import os
import os.path as osp
import shutil
import sys

from setuptools import setup

MIM_FILES = ('configs', 'tools', 'model-index.yml')


def install_mode() -> str:
    """'link' for editable installs, 'copy' for wheels and sdists, '' for
    any other setup.py command (egg_info, clean, ...)."""
    if 'develop' in sys.argv or 'editable_wheel' in sys.argv:
        return 'link'
    if 'bdist_wheel' in sys.argv or 'sdist' in sys.argv:
        return 'copy'
    return ''


def add_mim_extension(mode: str) -> None:
    """Put ``MIM_FILES`` under ``spml_mm/.mim`` as links or copies."""
    repo = osp.dirname(osp.abspath(__file__))
    mim = osp.join(repo, 'spml_mm', '.mim')
    os.makedirs(mim, exist_ok=True)
    for name in MIM_FILES:
        source = osp.join(repo, name)
        target = osp.join(mim, name)
        if osp.islink(target) or osp.isfile(target):
            os.remove(target)
        elif osp.isdir(target):
            shutil.rmtree(target)
        if mode == 'link':
            os.symlink(osp.relpath(source, mim), target)
        elif osp.isdir(source):
            shutil.copytree(
                source,
                target,
                ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
        else:
            shutil.copyfile(source, target)


if __name__ == '__main__':
    if install_mode():
        add_mim_extension(install_mode())
    setup()
