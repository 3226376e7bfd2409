"""The benchmark tools write into work_dirs/results unless --out-dir names
docs/results: a smoke run overwrote the tracked result pages."""
import argparse
import os.path as osp
import shutil
import subprocess

import pytest

from tests.conftest import PYTHON, REPO, dev_env
from benchmark import common

TRACKED = osp.join(REPO, 'docs', 'results')


@pytest.mark.slow
def test_label_bank_page_goes_to_the_work_folder_by_default(tmp_path):
    work = tmp_path / 'work_dirs' / 'results'
    work.mkdir(parents=True)
    shutil.copy(osp.join(TRACKED, 'label_bank.json'), work)
    with open(osp.join(TRACKED, 'label_bank.md'), 'rb') as f:
        tracked = f.read()
    proc = subprocess.run(
        [PYTHON, '-m', 'benchmark.label_bank_scale', '--render-only'],
        cwd=tmp_path, env=dev_env(),
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[-3:] == [
        'wrote work_dirs/results/label_bank.json',
        'wrote work_dirs/results/label_bank.md',
        '(the tracked pages in docs/results are unchanged; --out-dir '
        'docs/results writes there)'
    ]
    assert (work / 'label_bank.md').read_bytes() == tracked
    with open(osp.join(TRACKED, 'label_bank.md'), 'rb') as f:
        assert f.read() == tracked


@pytest.mark.parametrize('tool', [
    'accuracy', 'selection', 'label_bank_scale', 'speed', 'speed_banks',
    'speed_iteration', 'speed_losses'
])
def test_every_page_writer_defaults_to_the_work_folder(tool, monkeypatch):
    """Each tool's --out-dir default, read from its parser."""
    import importlib
    module = importlib.import_module(f'benchmark.{tool}')
    seen = {}

    def parse(parser, *a, **k):
        seen.update(out_dir=parser.get_default('out_dir'))
        raise SystemExit

    monkeypatch.setattr(argparse.ArgumentParser, 'parse_args', parse)
    with pytest.raises(SystemExit):
        module.main()
    # accuracy resolves its default after parsing (quick: the work root)
    assert seen['out_dir'] in (common.WORK_OUT_DIR, None)
    assert common.is_results_dir(osp.join(REPO, 'docs', 'results'))
    assert not common.is_results_dir(common.WORK_OUT_DIR)
