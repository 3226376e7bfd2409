"""The srun command lines that tools/slurm_{train,test}.sh build.

No Slurm here: a fake ``srun`` first on PATH writes its arguments and the
PYTHONPATH it was given to a JSON file instead of starting tasks.
"""
import json
import os
import os.path as osp
import stat

import pytest

from tests.conftest import REPO, run_tool

pytestmark = pytest.mark.slow  # runs the Slurm scripts (bash) in processes

FAKE_SRUN = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ['SRUN_RECORD'], 'w') as f:
    json.dump(dict(argv=sys.argv[1:], pythonpath=os.environ['PYTHONPATH']), f)
"""


@pytest.fixture
def fake_srun(tmp_path):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    srun = bin_dir / 'srun'
    srun.write_text(FAKE_SRUN)
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    record = tmp_path / 'srun.json'

    def call(script, args, **env):
        run_tool(['bash', script] + args,
                 env=dict(os.environ, PATH=f'{bin_dir}:{os.environ["PATH"]}',
                          SRUN_RECORD=str(record), **env))
        with open(record) as f:
            return json.load(f)

    return call


def srun_options(gpus, per_node, cpus):
    return [
        '-p', 'dev', '--job-name=spml', f'--gres=gpu:{per_node}',
        f'--ntasks={gpus}', f'--ntasks-per-node={per_node}',
        f'--cpus-per-task={cpus}', '--kill-on-bad-exit=1'
    ]


def test_train_command(fake_srun):
    got = fake_srun(
        'tools/slurm_train.sh', [
            'dev', 'spml', 'configs/em_apl/em_apl_vgg11bn_demo.py', 'work dir/x',
            '--amp', '--cfg-options', 'train_cfg.max_epochs=2'
        ],
        GPUS='16', GPUS_PER_NODE='8', CPUS_PER_TASK='4',
        SRUN_ARGS='--time=1:00:00 --exclusive', PYTHON='python3')
    assert got['argv'] == srun_options(16, 8, 4) + [
        '--time=1:00:00', '--exclusive', 'python3', '-u',
        'tools/train.py', 'configs/em_apl/em_apl_vgg11bn_demo.py',
        '--work-dir=work dir/x', '--launcher=slurm', '--amp',
        '--cfg-options', 'train_cfg.max_epochs=2'
    ]
    # the plugin's package is importable from the tasks
    assert osp.samefile(
        osp.join(REPO, got['pythonpath'].split(':')[0]), REPO)


def test_test_command_defaults(fake_srun):
    got = fake_srun('tools/slurm_test.sh',
                    ['dev', 'spml', 'configs/an/an_vgg11bn_demo.py', 'a.pth'])
    # MMPretrain's defaults: 8 GPUs on one node, 5 CPUs per task
    assert got['argv'] == srun_options(8, 8, 5) + [
        'python', '-u', 'tools/test.py',
        'configs/an/an_vgg11bn_demo.py', 'a.pth', '--launcher=slurm'
    ]
