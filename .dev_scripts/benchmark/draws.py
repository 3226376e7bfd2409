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
for them (no calibration columns then). ``--render`` only rewrites the
page from the json.
"""
import argparse
import json
import os
import os.path as osp
import subprocess
import sys

import numpy as np

from benchmark.common import REPO, dev_env

#: The methods compared, in the page's order: the baseline, the seed
#: methods and a teacher method.
METHODS = ('an', 'grloss', 'em_apl', 'lasd', 'vlpl')
#: The rules compared with the uniform draw.
DRAWS = ('commonest', 'rarest')
#: The synthetic teacher VLPL reads (benchmark.teacher_quality's noise).
TEACHER_NOISE = 0.3
ALPHA = 0.1
DEMO = 'data/demo'


def observe_options(draw):
    if draw == 'uniform':
        return []
    return [f'{s}_dataloader.dataset.observe={draw}' for s in ('train', 'val')]


def teacher_file(work_root):
    """The demo's synthetic teacher (written once)."""
    from benchmark.teacher_quality import write_teacher
    path = osp.join(REPO, work_root, f'teacher_noise{TEACHER_NOISE:g}.npz')
    if not osp.isfile(path):
        os.makedirs(osp.dirname(path), exist_ok=True)
        write_teacher('configs/vlpl/vlpl_vgg11bn_demo.py', TEACHER_NOISE,
                      path, 0)
    return path


def run(method, draw, seeds, work_root):
    """Train and test one method under one draw (benchmark.accuracy)."""
    out = osp.join(work_root, draw)
    options = observe_options(draw)
    if method == 'vlpl':
        options.append('model.head.label_bank.score_file='
                       f'{teacher_file(work_root)}')
    cmd = [sys.executable, '-m', 'benchmark.accuracy', '--suite', 'demo',
           '--methods', method, '--seeds', *map(str, seeds), '--work-root',
           out, '--out-dir', out, '--keep-scores']
    if options:
        cmd += ['--cfg-options', *options]
    print(' '.join(cmd), flush=True)
    subprocess.run(cmd, cwd=REPO, env=dev_env(), check=True)


def observed_val(draw):
    """The demo's validation split observed under ``draw`` (rows in the
    split's order) and its full labels."""
    import spml_mm  # noqa: F401
    from spml_mm.datasets import SPMLDataset
    dataset = SPMLDataset(osp.join(REPO, DEMO), split='val',
                          val_labels='observed', observe=draw, pipeline=[])
    num_classes = len(dataset.metainfo['classes'])
    observed = np.zeros((len(dataset), num_classes))
    for k in range(len(dataset)):
        observed[k, dataset.get_data_info(k)['gt_label']] = 1
    return observed


def calibration(scores_prefix, draw):
    """What the label-set calibrations give when the validation split's
    single positives follow ``draw``: the estimate of m against the true
    m, the class priors' error with the true m, and the test recall of
    conformal thresholds (target 1 - ALPHA on observed positives)."""
    from spml_mm.evaluation.calibration import (class_priors,
                                                conformal_thresholds,
                                                estimate_positives_per_image)
    val = np.load(scores_prefix + '_val.npz')
    test = np.load(scores_prefix + '_test.npz')
    full = (val['known'] == 1).astype(float)  # the demo validates on full
    observed = observed_val(draw)
    assert observed.shape == full.shape
    m_true = float(full.sum(1).mean())
    m_est, _ = estimate_positives_per_image(val['scores'], observed)
    priors = class_priors(observed, m_true)
    prior_error = float(100 * np.abs(priors - full.mean(0)).mean())
    thresholds, _ = conformal_thresholds(val['scores'], observed, ALPHA)
    truth = test['known'] == 1
    hit = test['scores'] >= thresholds
    per_class = (hit & truth).sum(0) / np.maximum(truth.sum(0), 1)
    return dict(m_true=m_true, m_est=float(m_est), prior_error=prior_error,
                conformal_recall=float(100 * (hit & truth).sum() /
                                       truth.sum()),
                conformal_min_class_recall=float(100 * per_class.min()))


def collect(work_root, draws, seeds, uniform_from=None):
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
                prefix = osp.join(out, 'scores', 'accuracy', f'{key}_{seed}')
                if osp.isfile(prefix + '_val.npz') and (
                        draw != 'uniform' or not uniform_from):
                    row.update(calibration(prefix, draw))
                rows[f'{draw}/{method}/{seed}'] = row
    return rows


def render(data):
    """The page: mAP per method and draw, and the calibrations."""
    rows = list(data['rows'].values())
    draws = [d for d in ('uniform', *DRAWS)
             if any(r['draw'] == d for r in rows)]
    lines = [
        '# Single positives chosen not uniformly',
        '',
        '<!-- written by benchmark.draws from draws.json; do not edit -->',
        '',
        f'Demo dataset, seed(s) {", ".join(map(str, data["seeds"]))}; '
        f'{data["note"]}',
        '',
        '## Test mAP',
        '',
        '| method | ' + ' | '.join(draws) + ' |',
        '| --- |' + ' --- |' * len(draws),
    ]
    for method in METHODS:
        got = {r['draw']: r for r in rows if r['method'] == method}
        if not got:
            continue
        label = next(iter(got.values()))['label']
        cells = []
        for draw in draws:
            row = got.get(draw)
            if row is None:
                cells.append('-')
                continue
            text = f'{row["mAP"]:.2f}'
            if draw != 'uniform' and 'uniform' in got:
                text += f' ({row["mAP"] - got["uniform"]["mAP"]:+.2f})'
            cells.append(text)
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    lines += [
        '',
        '## Label-set calibrations',
        '',
        'On the validation split observed under each draw: m, the mean number '
        'of labels per image (true / estimated by `estimate_positives_per_'
        'image`); the class priors `class_priors` derives from the observed '
        'positives with the true m (mean absolute error, points); conformal '
        f'thresholds at alpha {ALPHA:g}: the recall they reach on every test '
        f'positive (target {100 * (1 - ALPHA):.0f}%) and on the worst class.',
        '',
        '| method | draw | m true | m estimated | prior error | conformal '
        'recall | worst class recall |',
        '| --- | --- | --- | --- | --- | --- | --- |',
    ]
    for method in METHODS:
        for draw in draws:
            row = data['rows'].get(f'{draw}/{method}/{data["seeds"][0]}')
            if not row or 'm_true' not in row:
                continue
            lines.append(
                f'| {row["label"]} | {draw} | {row["m_true"]:.2f} | '
                f'{row["m_est"]:.2f} | {row["prior_error"]:.2f} | '
                f'{row["conformal_recall"]:.1f}% | '
                f'{row["conformal_min_class_recall"]:.1f}% |')
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--methods', nargs='+', default=list(METHODS),
                        choices=METHODS)
    parser.add_argument('--draws', nargs='+', default=list(DRAWS))
    parser.add_argument('--seeds', nargs='+', type=int, default=[0])
    parser.add_argument('--work-root', default='work_dirs/draws')
    parser.add_argument('--out-dir', default='work_dirs/draws')
    parser.add_argument('--uniform-from', default=None,
                        help='an accuracy.json whose runs stand in for the '
                        'uniform draw instead of training it')
    parser.add_argument('--note', default='', help='a line for the page')
    parser.add_argument('--render', action='store_true',
                        help='only render the page from the json')
    args = parser.parse_args(argv)
    json_path = osp.join(REPO, args.out_dir, 'draws.json')
    if not args.render:
        draws = list(args.draws)
        if not args.uniform_from:
            draws = ['uniform'] + draws
        for method in args.methods:
            for draw in draws:
                run(method, draw, args.seeds, args.work_root)
        data = dict(seeds=args.seeds, draws=args.draws, note=args.note,
                    uniform_from=args.uniform_from,
                    rows=collect(args.work_root, args.draws, args.seeds,
                                 args.uniform_from))
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
