"""tools/benchmark/speed_gpu.py on the CPU, tiny: both tables written, the
stock rows and the switch rows, with the device and versions."""
import re

import mmpretrain
import pytest
import torch

from tools.benchmark import speed_gpu


def test_speed_gpu_smoke(tmp_path):
    out = tmp_path / 'gpu.md'
    argv = [
        '--device', 'cpu', '--tiny', '--methods', 'AN', 'LASD',
        '--precisions', 'fp32', '--recipe-methods', 'stock',
        '--switches', 'batched_copy', '--workers', '1', '--no-compile',
        '--warmup', '1', '--iters', '1', '--rounds', '1', '--batch-size',
        '4', '--img-size', '32', '--out', str(out)
    ]
    speed_gpu.main(argv)
    text = out.read_text()
    assert f'`python -m tools.benchmark.speed_gpu {" ".join(argv)}`' in text
    assert f'torch {torch.__version__}' in text
    assert f'mmpretrain {mmpretrain.__version__}' in text
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
