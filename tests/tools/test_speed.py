"""benchmark.speed and its parts: the measuring module, the
entry points and the report."""
import glob
import json
import os.path as osp

import pytest
import torch

from tests.conftest import PYTHON, REPO, run_tool
from benchmark import measure, speed_losses, spml_setups
from benchmark.pages import speed as speed_page


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_profile_counts_live_tensors_and_operators():

    def fn():
        a = torch.empty(1_000_000)  # 4 MB
        b = torch.empty(2_000_000)  # 8 MB while a lives: 12 MB
        del a, b
        torch.empty(500_000)  # 2 MB after both are freed

    assert measure.profile_call(fn) == dict(memory=12_000_000, ops=3)
    x = torch.randn(4, 3)
    # operators called by other operators (sigmoid's own kernels) do not count
    assert measure.profile_call(lambda: x.sigmoid().exp().sum())['ops'] == 3
    big = torch.randn(300, 300)
    assert measure.costliest_operator(
        lambda: (big @ big).add(1)).startswith('mm (')


def test_interleaved_ratio_of_twice_the_work(one_thread):
    x = torch.randn(160, 160)

    def once():
        x @ x

    def twice():
        x @ x
        x @ x

    timed = measure.interleaved(dict(once=once, twice=twice), 'once', 7, 0.01)
    assert measure.clock() is measure.time.thread_time
    assert timed['once']['ratio'] == 1
    assert 1.6 < timed['twice']['ratio'] < 2.5
    assert timed['twice']['time'] > timed['once']['time'] > 0


def test_every_resnet50_config_has_a_table_name():
    """Every method folder's ResNet-50 config of a dataset is timed, under
    its card's label, and every loss with a time target among them."""
    for dataset in ('coco', 'cub'):
        found = spml_setups.method_configs(dataset)
        assert sorted(found.values()) == sorted(
            osp.relpath(p, REPO) for p in glob.glob(
                osp.join(REPO, 'configs', '*', f'resnet50_{dataset}.py')))
        assert found['OPML-SP'] == f'configs/opml/resnet50_{dataset}.py'
        assert set(speed_page.LOSS_TARGETS) <= set(found)


def test_loss_steps_see_the_configs_state():
    cfg = spml_setups.load(spml_setups.method_configs('coco')['EM + APL'])
    g = torch.Generator().manual_seed(0)
    target = spml_setups.one_positive(64, 80, g)
    bank = spml_setups.trained_bank(cfg, target, g)
    # APL over the whole run: about theta = 0.9 of the unobserved entries
    negatives = int(
        (bank.entries(torch.arange(64), target)['pseudo_label'] == -1).sum())
    assert 0.8 * 0.9 * 64 * 79 < negatives <= 0.9 * 64 * 79
    # every step runs forward and backward
    for name, path in spml_setups.method_configs('cub').items():
        speed_losses.loss_step(spml_setups.load(path), 8, 312)()
    speed_losses.loss_step(None, 8, 312)()


def fake_results(gr_ratio, lasd_share):
    losses = {
        f'{b}x{c}': {
            speed_page.REFERENCE_NAME: dict(
                ratio=1., time=1e-4, memory=2**20, ops=17,
                costliest='binary_cross_entropy_with_logits (40%)'),
            'AN': dict(ratio=1.05, time=1.5e-4, memory=2**20, ops=28,
                       costliest='mul (20%)'),
            'GR': dict(ratio=gr_ratio, time=3e-4, memory=2**21, ops=74,
                       costliest='pow (30%)'),
        }
        for b, c in speed_losses.LOSS_SHAPES
    }
    losses = dict(threads=1, timer='thread', shapes=losses)
    iteration = dict(
        batch=8, img_size=224, config='configs/an/resnet50_coco.py',
        iteration={
            'SPMLLinearClsHead + ANLoss': dict(ratio=1.01, time=2., memory=0),
            'MMPretrain': dict(ratio=1., time=1.98, memory=0)
        },
        heads={
            'AN': dict(time=1e-3, share=0.001),
            'LASD': dict(time=5e-3, share=lasd_share)
        })
    banks = [dict(name='EM + APL', matrix='COCO 82,081 x 80', time=0.5,
                  memory=2**26, storage=2**24)]
    return losses, iteration, banks


def test_report_says_which_targets_are_missed():
    text = speed_page.speed_page(*fake_results(1.9, 0.01), ['cmd'])
    assert '- every loss within its target ratio to BCE: met' in text
    assert '- head share of an iteration under 5%: met' in text
    assert ('| GR | 1.90 (2) | 300 | 2.00 | 1.90 (2.5) | 300 | 2.00 | '
            '1.90 (2.5) | 300 | 2.00 | 74 | pow (30%) | yes |') in text
    assert '| AN | 1.05 (1.1) |' in text
    assert f'| {speed_page.REFERENCE_NAME} | 1.00 | 100 |' in text
    assert 'Command: `cmd`' in text
    text = speed_page.speed_page(*fake_results(2.1, 0.06), ['cmd'])
    assert '- every loss within its target ratio to BCE: **missed** by GR' \
        in text
    assert '| LASD | 5.00 | 6.00% | **no** |' in text
    assert 'under 5%: **missed** by LASD' in text
    assert '| EM + APL | COCO 82,081 x 80 | 0.500 | 64.00 | 16.00 |' in text


def test_history_beside_this_run():
    losses, iteration, banks = fake_results(1.9, 0.01)
    history = dict(runs=[dict(label='old', source='a commit',
                              ratios=dict(GR=[5.2, 6.04], AN=[1.5]))])
    text = speed_page.speed_page(losses, None, None, ['cmd'], history)
    assert '*old*: a commit; *now*: the table above.' in text
    assert '| loss | old | now |' in text
    assert '| GR | 5.20 / 6.04 | 1.90 / 1.90 / 1.90 |' in text
    assert '| AN | 1.50 | 1.05 / 1.05 / 1.05 |' in text
    assert '| EM | - | - / - / - |' in text
    # without the iteration part there is no head target
    assert 'head share' not in text


@pytest.mark.slow
def test_quick_run_writes_its_page(tmp_path):
    out = run_tool([
        PYTHON, '-m', 'benchmark.speed', '--quick', '--threads', '1',
        '--out-dir',
        str(tmp_path)
    ])
    text = (tmp_path / 'speed.md').read_text()
    assert text in out
    for section in ('### Loss forward', '### Training iteration',
                    '### Label-bank update', '### Targets'):
        assert section in text
    for name in spml_setups.method_configs('coco'):
        assert f'| {name} |' in text
    assert 'CPU, 1 torch thread, timed by the thread\'s CPU time' in text
    # one JSON per measure, which the page is rendered from
    for part in ('losses', 'iteration', 'banks'):
        with open(tmp_path / f'speed_{part}.json') as f:
            assert json.load(f)['command'].startswith(
                'PYTHONPATH=.dev_scripts python -m benchmark.speed --quick')
    # an entry point alone re-renders the page from the parts there
    out = run_tool([
        PYTHON, '-m', 'benchmark.speed_banks', '--repeats', '1',
        '--scale', '0.01', '--threads', '1', '--out-dir',
        str(tmp_path)
    ])
    text = (tmp_path / 'speed.md').read_text()
    assert ('Command: `PYTHONPATH=.dev_scripts python -m '
            'benchmark.speed_banks --repeats 1') in text and '### Training iteration' in text
