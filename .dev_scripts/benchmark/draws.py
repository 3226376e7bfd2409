"""Single positives chosen not uniformly, against the uniform draw.

Trains the methods on the demo dataset with the training images' single
positive chosen by one of the protocol's rules (``observe`` of the dataset,
``spml_mm.datasets.protocol.OBSERVE_RULES``: ``commonest``, ``rarest``...)
and compares test mAP and the label-set calibrations with the uniform draw
(the papers' protocol), then writes ``draws.json`` and renders
``draws.md`` under ``--out-dir``::

    PYTHONPATH=.dev_scripts python -m benchmark.draws --out-dir docs/results

Each (method, draw) is one ``benchmark.accuracy`` run (resumable: a finished
run is not trained again) under ``--work-root/<draw>``, with its validation
and test scores kept. The uniform rows are trained likewise unless
``--uniform-from`` names an ``accuracy.json`` whose seed-0 mAPs stand in
for them (no calibration columns then). ``--collect`` trains nothing and
gathers the finished runs; ``--render`` only rewrites the page from the
json.
"""
import argparse
import json
import os
import os.path as osp
import subprocess
import sys

import numpy as np

from benchmark.common import REPO, dev_env
from benchmark.pages.draws import ALPHA, DRAWS, METHODS, render

#: The synthetic teacher VLPL reads (benchmark.teacher_quality's noise).
TEACHER_NOISE = 0.3


def data_options(data_root):
    """``--cfg-options`` that point the three dataloaders at
    ``data_root`` (none for the demo's own folder)."""
    if data_root == 'data/demo':
        return []
    return [f'{s}_dataloader.dataset.data_root={data_root}'
            for s in ('train', 'val', 'test')]


def observe_options(draw):
    if draw == 'uniform':
        return []
    return [f'{s}_dataloader.dataset.observe={draw}' for s in ('train', 'val')]


def ensure_data(data_root, num_train):
    """Generate a demo dataset of ``num_train`` official-train images
    (and half as many test images) into ``data_root`` if it is absent."""
    if osp.isfile(osp.join(REPO, data_root, 'formatted_val_labels.npy')):
        return
    from spml_mm.datasets import make_demo_dataset
    make_demo_dataset(osp.join(REPO, data_root), num_train=num_train,
                      num_test=num_train // 2, seed=0)


def teacher_file(work_root, data_root):
    """The demo's synthetic teacher (written once)."""
    import spml_mm  # noqa: F401
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS

    from spml_mm.benchmarks.synthetic_teacher import write_synthetic_teacher
    path = osp.join(REPO, work_root, f'teacher_noise{TEACHER_NOISE:g}.npz')
    if not osp.isfile(path):
        os.makedirs(osp.dirname(path), exist_ok=True)
        init_default_scope('mmpretrain')
        cfg = Config.fromfile(
            osp.join(REPO, 'configs/vlpl/vlpl_vgg11bn_demo.py'))
        dataset = dict(cfg.train_dataloader.dataset,
                       data_root=osp.join(REPO, data_root))
        write_synthetic_teacher(DATASETS.build(dataset), path, TEACHER_NOISE,
                                0, 0)
    return path


def run(method, draw, seeds, work_root, data_root):
    """Train and test one method under one draw (benchmark.accuracy)."""
    out = osp.join(work_root, draw)
    options = observe_options(draw) + data_options(data_root)
    if method == 'vlpl':
        options.append('model.head.label_bank.score_file='
                       f'{teacher_file(work_root, data_root)}')
    cmd = [sys.executable, '-m', 'benchmark.accuracy', '--suite', 'demo',
           '--methods', method, '--seeds', *map(str, seeds), '--work-root',
           out, '--out-dir', out, '--keep-scores']
    if options:
        cmd += ['--cfg-options', *options]
    print(' '.join(cmd), flush=True)
    subprocess.run(cmd, cwd=REPO, env=dev_env(), check=True)


def observed_val(draw, data_root):
    """The demo's validation split observed under ``draw`` (rows in the
    split's order)."""
    import spml_mm  # noqa: F401
    from spml_mm.datasets import SPMLDataset
    dataset = SPMLDataset(osp.join(REPO, data_root), split='val',
                          val_labels='observed', observe=draw, pipeline=[])
    num_classes = len(dataset.metainfo['classes'])
    observed = np.zeros((len(dataset), num_classes))
    for k in range(len(dataset)):
        observed[k, dataset.get_data_info(k)['gt_label']] = 1
    return observed


def calibration(scores_prefix, draw, data_root):
    """What the label-set calibrations give when the validation split's
    single positives follow ``draw``: the estimate of m against the true
    m, the class priors' error with the true m, and the test recall of
    conformal thresholds (target 1 - ALPHA on observed positives)."""
    from spml_mm.evaluation.calibration import (CalibrationError,
                                                class_priors,
                                                conformal_thresholds,
                                                estimate_positives_per_image)
    val = np.load(scores_prefix + '_val.npz')
    test = np.load(scores_prefix + '_test.npz')
    full = (val['known'] == 1).astype(float)  # the demo validates on full
    observed = observed_val(draw, data_root)
    assert observed.shape == full.shape
    m_true = float(full.sum(1).mean())
    m_est, _ = estimate_positives_per_image(val['scores'], observed)
    priors = class_priors(observed, m_true)
    prior_error = float(100 * np.abs(priors - full.mean(0)).mean())
    found = dict(m_true=m_true, m_est=float(m_est), prior_error=prior_error,
                 observed_min_class=int(observed.sum(0).min()))
    try:
        thresholds, _ = conformal_thresholds(val['scores'], observed, ALPHA)
    except CalibrationError as err:  # a class with too few observations
        return dict(found, conformal_refused=str(err).split(' (')[0])
    truth = test['known'] == 1
    hit = test['scores'] >= thresholds
    per_class = (hit & truth).sum(0) / np.maximum(truth.sum(0), 1)
    return dict(found,
                conformal_recall=float(100 * (hit & truth).sum() /
                                       truth.sum()),
                conformal_min_class_recall=float(100 * per_class.min()))


def collect(work_root, draws, seeds, data_root, uniform_from=None):
    """Every finished run's test mAP and calibration, by draw and method."""
    from benchmark.suites import label_of
    rows = {}
    for draw in ('uniform', *draws):
        out = osp.join(REPO, work_root, draw)
        path = osp.join(out, 'accuracy.json')
        if draw == 'uniform' and uniform_from:
            path = osp.join(REPO, uniform_from)
        if not osp.isfile(path):
            continue
        with open(path) as f:
            results = json.load(f)
        for method in METHODS:
            keys = [k for k in (method, 'gr') if k in results]
            key = keys[0] if keys and (method == 'grloss' or
                                       keys[0] == method) else method
            for seed in map(str, seeds):
                run_ = results.get(key, {}).get(seed)
                if not run_:
                    continue
                row = dict(method=method, label=label_of(method), draw=draw,
                           seed=int(seed), mAP=run_['mAP'],
                           seconds=run_.get('seconds'))
                prefix = osp.join(out, 'scores', 'accuracy',
                                  f'{key}_seed{seed}')
                if osp.isfile(prefix + '_val.npz') and (
                        draw != 'uniform' or not uniform_from):
                    row.update(calibration(prefix, draw, data_root))
                rows[f'{draw}/{method}/{seed}'] = row
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--methods', nargs='+', default=list(METHODS),
                        choices=METHODS)
    parser.add_argument('--draws', nargs='+', default=list(DRAWS))
    parser.add_argument('--seeds', nargs='+', type=int, default=[0])
    parser.add_argument('--work-root', default='work_dirs/draws')
    parser.add_argument('--out-dir', default='work_dirs/draws')
    parser.add_argument('--data-root', default='data/demo',
                        help='the demo dataset to train on (generated when '
                        'absent, with --num-train official-train images)')
    parser.add_argument('--num-train', type=int, default=4000)
    parser.add_argument('--uniform-from', default=None,
                        help='an accuracy.json whose runs stand in for the '
                        'uniform draw instead of training it')
    parser.add_argument('--note', default='', help='a line for the page')
    parser.add_argument('--render', action='store_true',
                        help='only render the page from the json')
    parser.add_argument('--collect', action='store_true',
                        help='train nothing: collect the finished runs '
                        'into the json and render the page')
    args = parser.parse_args(argv)
    json_path = osp.join(REPO, args.out_dir, 'draws.json')
    if not args.render:
        draws = list(args.draws)
        if not args.uniform_from:
            draws = ['uniform'] + draws
        ensure_data(args.data_root, args.num_train)
        for method in args.methods * (not args.collect):
            for draw in draws:
                run(method, draw, args.seeds, args.work_root,
                    args.data_root)
        data = dict(seeds=args.seeds, draws=args.draws, note=args.note,
                    uniform_from=args.uniform_from, data_root=args.data_root,
                    rows=collect(args.work_root, args.draws, args.seeds,
                                 args.data_root, args.uniform_from))
        os.makedirs(osp.dirname(json_path), exist_ok=True)
        with open(json_path, 'w') as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write('\n')
    with open(json_path) as f:
        data = json.load(f)
    with open(json_path[:-len('.json')] + '.md', 'w') as f:
        f.write(render(data))
    print(f'written {json_path} and draws.md')


if __name__ == '__main__':
    main()
