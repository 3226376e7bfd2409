""".dev_scripts/analysis/: per-class AP, distinguishability, pseudo-label
curves."""
import os
import os.path as osp
import re

import mmengine
import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score

from spml_mm.datasets import SPMLDataset
from tests.conftest import PYTHON, run_tool

from analysis import (distinguishability, per_class_ap,
                      pseudo_label_curve)

CONFIG = 'configs/em_apl/em_apl_vgg11bn_demo.py'


def options(data_root):
    # 2 epochs with the bank updated after the first (T = 2, T_w = 1)
    return [
        '--cfg-options', 'train_cfg.max_epochs=2',
        'default_hooks.pseudo_label.warmup_epochs=1',
        f'train_dataloader.dataset.data_root={data_root}',
        f'val_dataloader.dataset.data_root={data_root}',
        f'test_dataloader.dataset.data_root={data_root}', 'randomness.seed=0'
    ]


@pytest.fixture(scope='module')
def em_apl_run(tiny_demo, tmp_path_factory):
    """A 2-epoch EM + APL run on the tiny demo dataset, and its test dump."""
    work = str(tmp_path_factory.mktemp('em_apl'))
    run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', work] +
             options(tiny_demo))
    best = sorted(p for p in os.listdir(work) if p.startswith('best_'))[-1]
    out = run_tool([
        PYTHON, 'tools/test.py', CONFIG,
        osp.join(work, best), '--work-dir', work, '--out',
        osp.join(work, 'preds.pkl')
    ] + options(tiny_demo))
    test_map = float(re.findall(r'Epoch\(test\).*?spml/mAP: ([\d.]+)',
                                out)[-1])
    return dict(work=work, best=osp.join(work, best), data=tiny_demo,
                test_map=test_map)


def training_labels(data_root):
    """Observed and true label matrices of the training split."""
    dataset = SPMLDataset(data_root=data_root, split='train', pipeline=[])
    num = len(dataset.metainfo['classes'])
    observed = np.zeros((len(dataset), num), dtype=np.uint8)
    full = np.zeros_like(observed)
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        observed[i, info['gt_label']] = 1
        full[i, info['gt_label_full']] = 1
    return observed, full


def dump(path, scores, labels):
    mmengine.dump([
        dict(pred_score=torch.tensor(s), gt_label=torch.tensor(
            np.flatnonzero(y))) for s, y in zip(scores, labels)
    ], path)


def test_per_class_ap_of_dumps(tmp_path):
    rng = np.random.RandomState(0)
    labels = (rng.rand(40, 4) < 0.4).astype(np.uint8)
    labels[0] = 1  # every class has a positive
    better = np.clip(labels * 0.5 + rng.rand(40, 4) * 0.6, 0, 1)
    worse = rng.rand(40, 4)
    dump(tmp_path / 'gr.pkl', better, labels)
    dump(tmp_path / 'an.pkl', worse, labels)
    out = str(tmp_path / 'ap.png')
    ap = per_class_ap.main(
        [str(tmp_path / 'gr.pkl'), str(tmp_path / 'an.pkl'), '--out', out])
    for k in range(4):
        assert ap['method'][k] == pytest.approx(
            100 * average_precision_score(labels[:, k], better[:, k]))
        assert ap['baseline'][k] == pytest.approx(
            100 * average_precision_score(labels[:, k], worse[:, k]))
    assert osp.getsize(out) > 0
    # dumps of different test sets are refused
    dump(tmp_path / 'other.pkl', worse, 1 - labels)
    with pytest.raises(ValueError, match='same test set'):
        per_class_ap.main(
            [str(tmp_path / 'gr.pkl'), str(tmp_path / 'other.pkl')])


@pytest.mark.slow
def test_per_class_ap_of_a_work_dir_matches_tools_test(em_apl_run, tmp_path):
    # the work dir is scored again by the tool; the dump is tools/test.py's
    out = str(tmp_path / 'ap.png')
    ap = per_class_ap.main([
        em_apl_run['work'],
        osp.join(em_apl_run['work'], 'preds.pkl'), '--out', out
    ])
    np.testing.assert_allclose(ap['method'], ap['baseline'], atol=1e-4)
    assert ap['method'].mean() == pytest.approx(em_apl_run['test_map'],
                                                abs=0.01)
    assert list(ap['classes']) == [str(k) for k in range(10)]
    assert osp.getsize(out) > 0


def test_separation_by_hand():
    scores = np.array([[0.9, 0.2, 0.8], [0.1, 0.6, 0.3]])
    observed = np.array([[1, 0, 0], [0, 1, 0]])
    labels = np.array([[1, 0, 1], [1, 1, 0]])
    part = distinguishability.separate(scores, labels, observed)
    # unobserved positives: 0.8 and 0.1; negatives: 0.2 and 0.3
    assert sorted(part['positives']) == [0.1, 0.8]
    assert sorted(part['negatives']) == [0.2, 0.3]
    # W1 of two 2-point distributions: mean gap of sorted samples
    assert part['distance'] == pytest.approx((0.1 + 0.5) / 2)
    with pytest.raises(ValueError, match='unobserved true positives'):
        distinguishability.separate(scores, observed, observed)


@pytest.mark.slow
def test_distinguishability_of_a_training_run(em_apl_run, tmp_path):
    out = str(tmp_path / 'dist.png')
    ckpt_out = str(tmp_path / 'dist_ckpt.png')
    (part, ) = distinguishability.main(
        [em_apl_run['work'], '--names', 'EM+APL', '--out', out])
    observed, full = training_labels(em_apl_run['data'])
    assert len(part['positives']) == int((full & (1 - observed)).sum())
    assert len(part['negatives']) == int((1 - full).sum())
    assert 0 < part['distance'] < 1
    # the checkpoint alone (its stored config) gives the same numbers
    (again, ) = distinguishability.main([em_apl_run['best'], '--out',
                                         ckpt_out])
    assert again['distance'] == pytest.approx(part['distance'])
    assert osp.getsize(out) > 0 and osp.getsize(ckpt_out) > 0


@pytest.mark.slow
def test_pseudo_label_curve_of_a_training_run(em_apl_run, tmp_path):
    out = str(tmp_path / 'curve.png')
    (curves, ) = pseudo_label_curve.main(
        [em_apl_run['work'], '--out', out]).values()
    # one update, after epoch 1 of 2: per class int(theta * U_c / (T - T_w))
    # of the U_c unobserved entries become negatives, theta = 0.9
    observed, full = training_labels(em_apl_run['data'])
    unobserved = (1 - observed).sum(0)
    expected = int(sum(int(0.9 * u) for u in unobserved))
    assert curves['pseudo_negatives'] == {1: expected}
    assert curves['new_negatives'] == {1: expected}
    # the accuracy matches the bank saved in the checkpoint
    state = torch.load(em_apl_run['best'], weights_only=True)['state_dict']
    negative = state['head.label_bank.pseudo_label'].numpy() == -1
    assert int(negative.sum()) == expected
    accuracy = 100 * (full[negative] == 0).mean()
    assert curves['pseudo_negative_acc'][1] == pytest.approx(
        accuracy, abs=0.01)
    assert osp.getsize(out) > 0
    log = tmp_path / 'no_hook.log'
    log.write_text('Epoch(train) [1][4/4]  loss: 0.5\n')
    with pytest.raises(ValueError, match='no "Pseudo-labels'):
        pseudo_label_curve.read_curves(str(log))


def test_linear_probe_separates_separable_features_and_learns_from_labels():
    from analysis import linear_probe
    g = torch.Generator().manual_seed(0)
    # features that carry each class's presence in its own coordinate
    y = (torch.rand(300, 4, generator=g) < 0.3).float()
    x = torch.cat([y * 3 + torch.randn(300, 4, generator=g) * 0.5,
                   torch.randn(300, 6, generator=g)], 1)
    maps = linear_probe.probe(x[:200], y[:200], x[200:], y[200:], [1, 20],
                              lr=1e-2, batch_size=16)
    assert set(maps) == {1, 20} and maps[20] > 95
    # labels that are noise: no better than chance (prevalence ~30%)
    noise = (torch.rand(200, 4, generator=g) < 0.3).float()
    chance = linear_probe.probe(x[:200], noise, x[200:], y[200:], [20],
                                lr=1e-2, batch_size=16)
    assert chance[20] < 60


@pytest.mark.slow
def test_proxy_vs_papers_shares_against_hand_computed_values(tmp_path):
    import json

    from analysis import proxy_vs_papers
    # papers, VOC: AN 85.89, full 89.42, GR 89.83 -> (89.83 - 85.89) / 3.53
    voc = proxy_vs_papers.paper_shares('voc')
    assert voc['grloss'] == pytest.approx(3.94 / 3.53)
    assert voc['em'] == pytest.approx((89.09 - 85.89) / 3.53)
    assert 'opml' not in voc  # the papers report OPML-SP only
    runs = {'an': {'0': dict(mAP=30., seconds=1.), '1': dict(mAP=32.,
                                                               seconds=1.)},
            'full': {'0': dict(mAP=41., seconds=1.)},
            'grloss': {'0': dict(mAP=36., seconds=1.)},
            'em': {'0': dict(mAP=29., seconds=1.)}}
    # AN's mean 31, full 41: GR closes 50%, EM -20%
    assert proxy_vs_papers.run_shares(runs) == pytest.approx(
        dict(grloss=0.5, em=-0.2))
    path = tmp_path / 'runs.json'
    path.write_text(json.dumps(runs))
    out = run_tool([PYTHON, '-m', 'analysis.proxy_vs_papers',
                    f'{path}=proxy, linear', '--out',
                    str(tmp_path / 'gap.png')])
    # COCO: GR (73.17 - 64.92) / (76.78 - 64.92), EM (70.70 - 64.92) / 11.86
    assert '| GR | 112% | 70% | 50% |' in out
    assert '| EM | 91% | 49% | -20% |' in out
    assert '| OPML | - | - | - |' in out
    assert (tmp_path / 'gap.png').stat().st_size > 10000
