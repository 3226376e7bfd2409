""".dev_scripts/benchmark/speed_gpu.py on the CPU, tiny: both tables written,
the stock rows and the switch rows, with the device and versions; where it
writes, the page rendered again from its json, the budget, and a clear
refusal without CUDA."""
import json
import os.path as osp
import re
import subprocess

import mmpretrain
import pytest
import torch

from tests.conftest import DEV_SCRIPTS, PYTHON, REPO
from benchmark import speed_gpu
from benchmark.pages import gpu
from benchmark.common import code_fingerprint

TINY = [
    '--device', 'cpu', '--tiny', '--methods', 'AN', 'LASD',
    '--precisions', 'fp32', '--recipe-methods', 'stock',
    '--switches', 'batched_copy', '--workers', '1', '--no-compile',
    '--warmup', '1', '--iters', '1', '--rounds', '1', '--batch-size',
    '4', '--img-size', '32'
]


def test_speed_gpu_smoke(tmp_path, capsys):
    argv = TINY + ['--out', str(tmp_path)]
    speed_gpu.main(argv)
    assert f'wrote {tmp_path}/gpu.md' in capsys.readouterr().out
    text = (tmp_path / 'gpu.md').read_text()
    assert ('`PYTHONPATH=.dev_scripts python -m benchmark.speed_gpu '
            f'{" ".join(argv)}`') in text
    assert f'torch {torch.__version__}' in text
    assert f'mmpretrain {mmpretrain.__version__}' in text
    assert 'Incomplete' not in text
    heads = re.search(r'\| fp32 \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| - \|',
                      text)
    assert heads and all(float(v) > 0 for v in heads.groups())
    rows = re.findall(r'\| stock fp32 \| (\w+) \| ([\d.]+) \| ([\d.]+) \| '
                      r'([\d.]+) \| - \|', text)
    assert [r[0] for r in rows] == ['stock', 'batched_copy', 'gpu_fast']
    # speed-up: images/s with data against the stock row's
    for row in rows:
        assert float(row[3]) == pytest.approx(
            float(row[1]) / float(rows[0][1]), rel=0.03, abs=0.01)
    # the targets: which head is below 0.97 of the stock head, and by how
    # much, from the json's images/s
    record = json.loads((tmp_path / 'gpu.json').read_text())
    assert record['complete'] and record['device'] == 'cpu'
    fp32 = record['heads']['fp32']
    shares = {m: fp32[m]['images_per_s'] / fp32['stock']['images_per_s']
              for m in ('AN', 'LASD')}
    below = [f'{m} fp32 {share:.3f}' for m, share in shares.items()
             if share < 0.97]
    line = re.search(r'Below the target: (.*)\.\n', text).group(1)
    assert [part.rsplit(' (', 1)[0] for part in line.split('; ')] == (
        below or ['none'])
    # the page again from the json, into another folder: the same text
    again = tmp_path / 'again'
    speed_gpu.main(['--render', str(tmp_path / 'gpu.json'), '--out',
                    str(again)])
    assert (again / 'gpu.md').read_text() == text
    assert '`gpu_fast` below the target: ' in text
    # a recipe table without its gpu_fast row says so, not 'none'
    del record['recipe']['stock fp32']['gpu_fast']
    (tmp_path / 'partial.json').write_text(json.dumps(record))
    speed_gpu.main(['--render', str(tmp_path / 'partial.json'), '--out',
                    str(tmp_path / 'partial')])
    page = (tmp_path / 'partial' / 'gpu.md').read_text()
    assert '`gpu_fast` is not measured yet.' in page
    assert '`gpu_fast` below the target' not in page


def test_the_input_switches_alone_and_with_the_recipe(tmp_path):
    """image_cache (the training images' cache written first) and
    device_flip, each alone and with the recipe's switches."""
    argv = TINY[:TINY.index('--switches')] + [
        '--switches', 'batched_copy', 'image_cache', 'device_flip'
    ] + TINY[TINY.index('--workers'):] + ['--tables', 'recipe', '--out',
                                          str(tmp_path)]
    speed_gpu.main(argv)
    text = (tmp_path / 'gpu.md').read_text()
    rows = re.findall(r'\| stock fp32 \| (\w+) \| ([\d.]+) \|', text)
    assert [r[0] for r in rows] == [
        'stock', 'batched_copy', 'image_cache', 'device_flip', 'gpu_fast',
        'gpu_fast_input']
    assert all(float(r[1]) > 0 for r in rows)
    assert '`gpu_fast_input`: with the input switches the recipe leaves ' \
        'off, `image_cache` and `device_flip`' in text
    assert speed_gpu.recipe_variants(speed_gpu.parse_args(argv))[
        'gpu_fast_input'] == ['channels_last', 'cudnn_benchmark',
                              'batched_copy', 'loader', 'image_cache',
                              'device_flip']


def test_speed_gpu_budget_keeps_what_it_measured(tmp_path):
    # no time for a second row: the stock head's row is measured, the page
    # says it is incomplete, and the json has what was measured
    speed_gpu.main(TINY + ['--tables', 'heads', '--budget', '0.001',
                           '--out', str(tmp_path)])
    record = json.loads((tmp_path / 'gpu.json').read_text())
    assert not record['complete']
    assert list(record['heads']['fp32']) == ['stock']
    assert 'Incomplete' in (tmp_path / 'gpu.md').read_text()
    # --resume keeps the measured row and measures the others
    again = tmp_path / 'again'
    speed_gpu.main(TINY + ['--tables', 'heads', '--resume',
                           str(tmp_path / 'gpu.json'), '--out', str(again)])
    resumed = json.loads((again / 'gpu.json').read_text())
    assert resumed['complete']
    assert list(resumed['heads']['fp32']) == ['stock', 'AN', 'LASD']
    assert resumed['heads']['fp32']['stock'] == record['heads']['fp32'][
        'stock']
    # rows of another version of the code are measured again: a table's
    # ratios compare one version's heads
    assert record['code'] == code_fingerprint()
    record['code'] = 'another'
    (tmp_path / 'other.json').write_text(json.dumps(record))
    other = tmp_path / 'other'
    speed_gpu.main(TINY + ['--tables', 'heads', '--budget', '0.001',
                           '--resume', str(tmp_path / 'other.json'),
                           '--out', str(other)])
    remeasured = json.loads((other / 'gpu.json').read_text())
    assert remeasured['code'] == code_fingerprint()
    assert remeasured['heads']['fp32']['stock'] != record['heads']['fp32'][
        'stock']


@pytest.mark.slow
def test_speed_gpu_default_out_and_no_cuda(tmp_path):
    tracked = osp.join(REPO, 'docs', 'results', 'gpu.md')
    before = open(tracked).read()
    env = dict(PYTHONPATH=f'{REPO}:{DEV_SCRIPTS}', CUDA_VISIBLE_DEVICES='',
               PATH='/usr/bin:/bin', HOME=str(tmp_path))
    # without CUDA and without --device: the message, not a driver error
    proc = subprocess.run([PYTHON, '-m', 'benchmark.speed_gpu',
                           '--tables', 'heads'], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert 'finds no CUDA GPU here' in proc.stderr
    assert '--device cpu --tiny' in proc.stderr
    # the tiny smoke test by default writes under the current folder's
    # work_dirs, not the tracked page
    proc = subprocess.run([PYTHON, '-m', 'benchmark.speed_gpu', *TINY,
                           '--tables', 'heads'], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'wrote work_dirs/speed_gpu/gpu.md' in proc.stdout
    assert (tmp_path / 'work_dirs' / 'speed_gpu' / 'gpu.json').is_file()
    assert open(tracked).read() == before


def test_a_missed_recipe_target_names_what_bounds_it():
    """Below 2x, the page says whether the loader (much slower than the
    step alone) or the step bounds gpu_fast, from the row's two speeds."""
    def timed(loaded, replayed):
        return dict(loaded=dict(images_per_s=loaded, peak_mib=None),
                    replayed=dict(images_per_s=replayed, peak_mib=None))

    record = dict(command='c', environment='e', settings=dict(
        batch_size=32, img_size=448, warmup=3, iters=10, rounds=3),
        heads={}, complete=True, recipe={
            'stock fp16': dict(stock=timed(400., 600.),
                               gpu_fast=timed(600., 900.)),
            'stock fp32': dict(stock=timed(370., 450.),
                               gpu_fast=timed(555., 590.))})
    text = gpu.render(record)
    assert ('stock fp16 1.50x (0.50 short; the loader: the step alone runs '
            'at 2.25x, the loader feeds 67% of it)') in text
    assert ('stock fp32 1.50x (0.50 short; the step: without data loading '
            '1.59x, the loader feeds 94% of it)') in text


def test_the_heads_page_gives_the_rounds_spread():
    """Where rows keep their rounds, the page gives how far apart they are,
    the most per precision, to read the shares against."""
    def timed(*rounds):
        return dict(images_per_s=sorted(rounds)[1], peak_mib=None,
                    rounds=list(rounds))

    record = dict(command='c', environment='e', settings=dict(
        batch_size=32, img_size=448, warmup=3, iters=10, rounds=3),
        recipe={}, complete=True, heads={
            'fp16': dict(stock=timed(100., 104., 98.),
                         AN=timed(95., 100., 96.)),
            'bf16': dict(stock=timed(100., 100., 100.),
                         AN=dict(images_per_s=99., peak_mib=None))})
    text = gpu.render(record)
    assert ("The rounds' spread (a row's fastest round against its slowest, "
            'the most in each precision): fp16 6.1%; bf16 0.0%') in text
    del record['heads']['fp16']  # rows of before the rounds were kept
    record['heads']['bf16']['stock'].pop('rounds')
    assert "The rounds' spread" not in gpu.render(record)
