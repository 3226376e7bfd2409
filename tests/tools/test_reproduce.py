""".dev_scripts/benchmark/reproduce.sh (dry run) and its table."""
import os
import os.path as osp
import subprocess

import pytest

from benchmark import reproduce_table
from tests.conftest import PYTHON, REPO, run_tool

pytestmark = pytest.mark.slow  # runs the shell script in processes

SCRIPT = '.dev_scripts/benchmark/reproduce.sh'
#: the script's default runs, in the papers' row order
METHODS = reproduce_table.script_methods()
#: methods that train AN's config with another loss, and their options
AN_VARIANTS = {
    'full': 'train_dataloader.dataset.full_labels=True',
    'an_ls': 'model.head.loss.label_smoothing=0.1',
    'wan': 'model.head.loss.unobserved_weight=wan',
    'hill': 'model.head.loss.type=UnifiedSPMLLoss '
            'model.head.loss.preset=hill',
    'splc': 'model.head.loss.type=UnifiedSPMLLoss '
            'model.head.loss.preset=splc',
}


def dry_run(dataset, **env):
    return run_tool(['bash', SCRIPT, dataset],
                    env=dict(os.environ, DRY_RUN='1', PYTHON=PYTHON, **env))


def test_dry_run_prints_every_method(tmp_path):
    out = dry_run('voc', WORK_ROOT=str(tmp_path), SEEDS='0 1')
    for method in METHODS:
        folder = 'an' if method in AN_VARIANTS else method
        config = f'configs/{folder}/resnet50_voc.py'
        assert osp.isfile(osp.join(REPO, config))
        for seed in (0, 1):
            work = f'{tmp_path}/{method}/seed{seed}'
            options = f'randomness.seed={seed}'
            if method in AN_VARIANTS:
                options += ' ' + AN_VARIANTS[method]
            if method == 'role':  # 8 processes: per-row Adam of the table
                options += ' model.head.label_bank.adam=per_row'
            assert (f'+ bash tools/dist_train.sh {config} 8 --work-dir '
                    f'{work} --cfg-options {options}\n') in out
            assert (f'+ {PYTHON} tools/test.py {config} '
                    f'{work}/best_spml_mAP_epoch_N.pth --work-dir {work}'
                    ) in out
    # the upper bound trains AN's config on the true labels, only it
    assert out.count('full_labels=True') == 4  # 2 seeds x (train + test)
    table = '-m benchmark.reproduce_table'
    assert f'{table} {tmp_path} --dataset voc --methods ' \
        + ' '.join(METHODS) in out
    assert f'{table} {osp.dirname(tmp_path)} --layout' in out
    assert not os.listdir(tmp_path)  # nothing ran


def test_gpus_methods_and_finished_runs(tmp_path):
    finished = tmp_path / 'an' / 'seed0'
    finished.mkdir(parents=True)
    (finished / 'test.log').write_text('Epoch(test) [5/5]  spml/mAP: 64.90\n')
    out = dry_run('coco', WORK_ROOT=str(tmp_path), GPUS='4',
                  METHODS='an lasd')
    assert f'= {finished}: tested already' in out
    assert 'tools/dist_train.sh configs/an/' not in out
    assert ('+ bash tools/dist_train.sh configs/lasd/resnet50_coco.py 4 '
            f'--work-dir {tmp_path}/lasd/seed0') in out
    assert 'grloss' not in out


@pytest.mark.parametrize('args,env,message', [
    (['imagenet'], {}, 'Usage: bash'),
    ([], {}, 'Usage: bash'),
    (['voc'], {'METHODS': 'an nosuchmethod'},
     'No such config: configs/nosuchmethod/resnet50_voc.py'),
])
def test_refuses_bad_input(args, env, message):
    proc = subprocess.run(['bash', SCRIPT, *args], cwd=REPO,
                          capture_output=True, text=True,
                          env=dict(os.environ, DRY_RUN='1', **env))
    assert proc.returncode != 0
    assert message in proc.stderr
    assert '+ ' not in proc.stdout


def test_table_of_finished_runs(tmp_path):
    maps = {'full': [90., 88.], 'an': [80., 82.], 'grloss': [86., 86.5],
            'opml': [85.]}
    for method, values in maps.items():
        for seed, value in enumerate(values):
            work = tmp_path / method / f'seed{seed}'
            work.mkdir(parents=True)
            (work / 'test.log').write_text(
                'Epoch(val) [8][10/10]  spml/mAP: 1.00\n'
                f'Epoch(test) [20/20]  spml/mAP: {value:.4f}  data_time: 1\n')
            (work / 'train_seconds').write_text(f'{100 * (seed + 1)}\n')
    out = run_tool([
        PYTHON, '-m', 'benchmark.reproduce_table',
        str(tmp_path), '--dataset', 'voc', '--methods', *maps, 'em'
    ])
    rows = {line.split(' | ')[0][2:]: line.split(' | ')
            for line in out.splitlines() if line.startswith('| ')}
    # means, population std (accuracy.py's), gap share, mean time, paper
    assert rows['full-label BCE (upper bound)'][1:7] == [
        '89.00', '1.00', '2', '100%', '150', '89.42 |']
    assert rows['AN'][1:5] == ['81.00', '1.00', '2', '0%']
    # (86.25 - 81) / (89 - 81) = 65.6%
    assert rows['GR'][1:7] == ['86.25', '0.25', '2', '66%', '150', '89.83 |']
    # OPML's ResNet-50 configs are OPML-SP: (85 - 81) / 8 = 50%
    assert rows['OPML-SP'][1:7] == ['85.00', '0.00', '1', '50%', '100',
                                    '89.20 |']
    assert 'EM' not in rows  # no finished run


FAKE_PYTHON = r'''#!/usr/bin/env bash
# Stands in for python: training makes best checkpoints, the best one is the
# later (as its record would say), testing prints a test mAP, the table helper
# runs for real.
echo "$*" >> "$FAKE_LOG"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    [ "${args[i]}" = --work-dir ] && work=${args[i + 1]}
done
case "$*" in
    *torch.distributed.run*)
        mkdir -p "$work"
        touch "$work/best_spml_mAP_epoch_9.pth" \
              "$work/best_spml_mAP_epoch_10.pth" ;;
    *tools/best_checkpoint.py*) echo "${args[1]}/best_spml_mAP_epoch_10.pth" ;;
    *tools/test.py*) echo 'Epoch(test) [9/9]  spml/mAP: 77.5000' ;;
    *) exec "$REAL_PYTHON" "$@" ;;
esac
'''


def test_runs_train_test_and_table_with_a_fake_python(tmp_path):
    fake = tmp_path / 'python'
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / 'calls.log'
    work_root = tmp_path / 'work' / 'cub'
    out = run_tool(['bash', SCRIPT, 'cub'],
                   env=dict(os.environ, PYTHON=str(fake), FAKE_LOG=str(log),
                            REAL_PYTHON=PYTHON, WORK_ROOT=str(work_root),
                            METHODS='an lasd', GPUS='2'))
    calls = log.read_text().splitlines()
    assert len(calls) == 8  # 2 x (train, best checkpoint, test) + 2 tables
    assert '--nproc_per_node=2' in calls[0]
    assert 'configs/an/resnet50_cub.py' in calls[0]
    # the best checkpoint the run records is tested
    assert calls[1] == f'tools/best_checkpoint.py {work_root}/an/seed0'
    assert calls[2].startswith(
        f'tools/test.py configs/an/resnet50_cub.py '
        f'{work_root}/an/seed0/best_spml_mAP_epoch_10.pth')
    assert (work_root / 'lasd' / 'seed0' / 'train_seconds').is_file()
    assert 'spml/mAP: 77.5' in (work_root / 'lasd' / 'seed0' /
                                'test.log').read_text()
    assert '| AN | 77.50 | 0.00 | 1 | - |' in out
    assert '| LASD | 77.50 | 0.00 | 1 | - |' in out
    assert '| LASD | 77.50 | 0.00 | 1 | - | 0 | 22.01 |' in out  # Table 2
    # the papers' layout: LASD's CUB cell, every other dataset without runs
    assert ('| LASD | - (89.53) | - (72.22) | - (50.52) | 77.50 (22.01) |'
            in out)
    assert '| full-label BCE (upper bound) | - (89.42) | - (76.78) |' in out


def test_table_in_the_papers_layout(tmp_path):
    runs = {('voc', 'an'): 80., ('voc', 'll_r'): 88., ('coco', 'll_r'): 70.,
            ('cub', 'an_ls'): 17.}
    for (dataset, method), value in runs.items():
        work = tmp_path / dataset / method / 'seed0'
        work.mkdir(parents=True)
        (work / 'test.log').write_text(
            f'Epoch(test) [20/20]  spml/mAP: {value:.4f}\n')
    out = run_tool([PYTHON, '-m', 'benchmark.reproduce_table',
                    str(tmp_path), '--layout'])
    rows = [line for line in out.splitlines() if line.startswith('| ')]
    assert rows[0] == '| method | VOC | COCO | NUS | CUB |'
    labels = [row.split(' | ')[0][2:] for row in rows[2:]]
    # a row per run of the script, in its order, labelled by the cards
    # (OPML's ResNet-50 configs: OPML-SP) or as AN's variants
    assert labels == [reproduce_table.label_of(m) for m in METHODS]
    assert (labels[0], labels[2], labels[-1]) == (
        'full-label BCE (upper bound)', 'AN-LS', 'OPML-SP')
    assert '| AN | 80.00 (85.89) | - (64.92) | - (42.27) | - (18.31) |' in out
    assert '| LL-R | 88.00 (89.20) | 70.00 (71.00) | - (47.40) | - (19.50) |' \
        in out
    assert '| AN-LS | - | - | - | 17.00 |' in out
