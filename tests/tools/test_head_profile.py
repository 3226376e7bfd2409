""".dev_scripts/benchmark/head_profile.py: the ATen operators a training step
calls itself, by phase, per head; and their section under speed_gpu.py's heads
table."""
import json
import types

import torch
import torch.nn.functional as F
from torch.profiler import record_function

from benchmark import head_profile, speed_gpu
from benchmark.pages import gpu
from benchmark.pages import head_profile as head_profile_page

TINY = ['--device', 'cpu', '--tiny', '--batch-size', '4', '--img-size',
        '32', '--iters', '2']


def test_count_step_counts_a_steps_own_operators_by_phase():
    # a step of known operators: linear calls t and addmm inside (counted
    # once), the loss one exp, the optimizer two adds
    head = types.SimpleNamespace(_get_loss=lambda x: x.exp())
    model = types.SimpleNamespace(head=head)
    w = torch.ones(3, 3)

    def step(x):
        y = F.linear(x, w)
        head._get_loss(y)
        with record_function('Optimizer.step#Adam.step'):
            w.add_(1.).add_(-1.)

    ops = head_profile.count_step(model, step, lambda: torch.ones(2, 3), 3)
    assert ops == dict(optimizer=2., loss=1., other=1., total=4.)
    assert head._get_loss(torch.zeros(1)) == 1  # the head as it was


def test_head_profile_tiny(tmp_path):
    record = head_profile.main(TINY + [
        '--methods', 'AN', 'GR', 'LASD', '--default-constructor', '--out',
        str(tmp_path)
    ])
    assert json.loads((tmp_path / 'head_profile.json').read_text()) == record
    heads = record['heads']
    assert list(heads) == ['stock', 'AN', 'GR', 'LASD']
    assert record['environment'].startswith('CPU')
    for result in heads.values():
        ops = result['ops']
        assert ops['total'] == sum(ops[p] for p in head_profile_page.PHASES)
        assert ops['loss'] > 0 and ops['optimizer'] > 0
    # GR's config gives the head lr_mult=10: 2 groups; MMEngine's default
    # constructor makes one per parameter of the tiny ResNet-18 (62), whose
    # Adam updates cost several operators each
    gr = heads['GR']
    assert gr['param_groups'] == 2
    default = gr['default_constructor']
    assert default['param_groups'] == 62
    assert default['ops']['optimizer'] > 4 * gr['ops']['optimizer']
    assert default['ops']['other'] == gr['ops']['other']
    assert 'default_constructor' not in heads['AN']
    assert heads['LASD']['views'] == 3 and heads['AN']['views'] == 1
    text = (tmp_path / 'head_profile.md').read_text()
    # a page of its own (the docs build refuses a page opening at H3)
    assert text.startswith('# Why: operators per step\n')
    assert '| GR | 2 | 1 |' in text and '| 62 |' in text
    assert '- LASD: 3 views of each image' in text


def gpu_record():
    """A speed_gpu.py record: GR below its target, AN above."""
    rate = dict(images_per_s=100., peak_mib=None)
    return dict(
        command='PYTHONPATH=.dev_scripts python -m benchmark.speed_gpu',
        environment='GPU X',
        device='cuda', tiny=False, complete=True, recipe={},
        settings=dict(batch_size=32, img_size=448, warmup=1, iters=1,
                      rounds=1),
        heads=dict(fp32=dict(stock=rate, AN=dict(rate, images_per_s=99.),
                             GR=dict(rate, images_per_s=80.))))


def profile_record():
    def result(groups, optimizer, loss, views=1):
        ops = dict(optimizer=optimizer, loss=loss, other=600.)
        return dict(param_groups=groups, views=views,
                    ops=dict(ops, total=sum(ops.values())))

    return dict(
        command='PYTHONPATH=.dev_scripts python -m benchmark.head_profile',
        environment='CPU (x86_64, 2 threads)', commit='abc', device='cpu',
        tiny=False, settings=dict(batch_size=32, img_size=64, iters=1),
        heads=dict(stock=result(1, 300., 70.), AN=result(1, 300., 10.),
                   GR=dict(result(2, 310., 40.),
                           default_constructor=result(161, 2200., 40.))))


def test_render_puts_the_profile_under_the_heads_table(tmp_path):
    record, profile = gpu_record(), profile_record()
    (tmp_path / 'gpu.json').write_text(json.dumps(record))
    (tmp_path / 'profile.json').write_text(json.dumps(profile))
    speed_gpu.main(['--render', str(tmp_path / 'gpu.json'), '--op-profile',
                    str(tmp_path / 'profile.json'), '--out',
                    str(tmp_path / 'out')])
    text = (tmp_path / 'out' / 'gpu.md').read_text()
    # the timings' json is the record as it was: no CPU number in it
    assert json.loads((tmp_path / 'out' / 'gpu.json').read_text()) == record
    heads, _, why = text.partition('### Why: operators per step')
    assert '| fp32 | 100.0 | 0.990 | 0.800 | - | - |' in heads
    assert 'Below the target: GR fp32 0.800 (0.170 short).' in heads
    assert ('the timings of spml-mm commit not recorded, the operators of '
            'commit abc') in heads
    assert 'on CPU (x86_64, 2 threads), spml-mm commit abc' in why
    assert '| GR | 2 | 1 | 950 | 0.98 | 310 | 40 | 2840 | 161 |' in why
    # the missed head gets its reason, the others none
    assert ("- GR: under MMEngine's default constructor, 161 parameter "
            'groups (one per parameter, from the config\'s paramwise_cfg) '
            "cost +1890 operators in the optimizer (2.93x the stock step's)"
            '; 2 groups now; 0.98x the stock step\'s operators (+10 in '
            'optimizer).') in why
    assert '- AN:' not in why
    # without a profile, the page as before
    assert '### Why' not in gpu.render(record)
