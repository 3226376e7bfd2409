import os.path as osp
import subprocess
import sys

import pytest

from spml_mm.datasets import make_demo_dataset

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


@pytest.fixture(scope='session')
def tiny_demo(tmp_path_factory):
    """A small demo dataset: 160 official-train and 80 test images."""
    root = str(tmp_path_factory.mktemp('demo'))
    make_demo_dataset(root, num_train=160, num_test=80, seed=0)
    return root


def run_tool(args, timeout=600, env=None):
    """Run a repository command; fail with its output if it fails."""
    proc = subprocess.run(
        args,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env)
    if proc.returncode != 0:
        pytest.fail(f'{" ".join(args)} failed ({proc.returncode}):\n'
                    f'{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}')
    return proc.stdout + proc.stderr


PYTHON = sys.executable
