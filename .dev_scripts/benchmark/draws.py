"""Single positives chosen not uniformly, against the uniform draw.

Trains the methods of a suite with the training images' single positive
chosen by one of the protocol's rules (``observe`` of the dataset,
``spml_mm.datasets.protocol.OBSERVE_RULES``: ``commonest``, ``rarest``,
``largest``) and compares test mAP and the label-set calibrations with the
uniform draw (the papers' protocol), then writes ``draws.json`` and renders
``draws.md`` under ``--out-dir``, one section per suite (a run updates its
own)::

    PYTHONPATH=.dev_scripts python -m benchmark.draws --out-dir docs/results
    PYTHONPATH=.dev_scripts python -m benchmark.draws --suite proxy-voc \
        --fraction 0.2 --draws commonest rarest largest --out-dir docs/results

The demo suite trains on a demo dataset generated for it (``--data-root``,
``--num-train``); a proxy suite on the proxy of the accuracy pages
(``--regime``, ``--fraction``; data and feature cache made if missing),
each method at the rate its accuracy page's search chose where it has one
(``accuracy_<suite>_<regime>[-f<fraction>]_lr_search.json`` in
``docs/results``), the others at their config's. VLPL reads a synthetic
teacher (:data:`TEACHER_NOISE`) written for the suite's training images.
Each (method, draw) is one ``benchmark.accuracy`` run (resumable: a finished
run is not trained again) under ``--work-root/<draw>``, with its validation
and test scores kept. The uniform rows are trained likewise unless
``--uniform-from`` names an accuracy json whose seed-0 mAPs stand in for
them (no calibration columns then). ``--collect`` trains nothing and
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

from benchmark.common import REPO, RESULTS_DIR, dev_env, load_json
from benchmark.pages.accuracy import chosen_lrs
from benchmark.pages.draws import ALPHA, DRAWS, METHODS, render
from benchmark.suites import (SUITE_TITLES, proxy_options, proxy_root,
                              run_name, suite_config)
from benchmark.training import prepare_suite, write_teacher

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


def teacher_file(args):
    """The suite's synthetic teacher (written once)."""
    path = osp.join(REPO, args.work_root,
                    f'teacher_noise{TEACHER_NOISE:g}.npz')
    if not osp.isfile(path):
        os.makedirs(osp.dirname(path), exist_ok=True)
        config = suite_config(args.suite, 'vlpl', args.regime)
        write_teacher(config, TEACHER_NOISE, path, 0,
                      options=suite_options(args, config))
    return path


def suite_options(args, config):
    """``--cfg-options`` that point ``config`` at the suite's data."""
    if args.suite == 'demo':
        return data_options(args.data_root)
    return proxy_options(args.suite, args.fraction, config)


def lr_options(args, method):
    """The learning rate the suite's accuracy page chose for ``method``
    (none for the demo, whose configs have their rates, nor for a method
    that search did not run)."""
    if args.suite == 'demo':
        return []
    found = load_json(osp.join(RESULTS_DIR,
                               f'{accuracy_name(args)}_lr_search.json'))
    lr = chosen_lrs(found).get(method)
    return [f'optim_wrapper.optimizer.lr={lr:g}'] if lr else []


def accuracy_name(args):
    """The name of ``benchmark.accuracy``'s results for the suite."""
    return 'accuracy' if args.suite == 'demo' else f'accuracy_{args.section}'


def run(method, draw, args):
    """Train and test one method under one draw (benchmark.accuracy)."""
    out = osp.join(args.work_root, draw)
    options = observe_options(draw) + lr_options(args, method)
    if args.suite == 'demo':
        options += data_options(args.data_root)
    if method == 'vlpl':
        options.append('model.head.label_bank.score_file='
                       f'{teacher_file(args)}')
    cmd = [sys.executable, '-m', 'benchmark.accuracy', '--suite', args.suite,
           '--methods', method, '--seeds', *map(str, args.seeds),
           '--work-root', out, '--out-dir', out, '--keep-scores']
    if args.suite != 'demo':
        cmd += ['--regime', args.regime, '--fraction', f'{args.fraction:g}']
    if options:
        cmd += ['--cfg-options', *options]
    print(' '.join(cmd), flush=True)
    subprocess.run(cmd, cwd=REPO, env=dev_env(), check=True)


def observed_val(draw, data_root):
    """The validation split of ``data_root`` observed under ``draw`` (rows
    in the split's order)."""
    import spml_mm  # noqa: F401
    from spml_mm.datasets import SPMLDataset
    dataset = SPMLDataset(osp.join(REPO, data_root), split='val',
                          val_labels='observed', observe=draw, pipeline=[])
    num_classes = len(dataset.metainfo['classes'])
    observed = np.zeros((len(dataset), num_classes))
    for k in range(len(dataset)):
        observed[k, dataset.get_data_info(k)['gt_label']] = 1
    return observed


def chosen_test(truth, draw, data_root):
    """The test positives ``draw`` chooses, one per image (N, C bool), by
    the key it chose the validation images' observed positives with (the
    official train split's class frequencies for ``commonest`` and
    ``rarest``): positives exchangeable with the observed ones."""
    from spml_mm.datasets.protocol import observe_labels
    root = osp.join(REPO, data_root)
    key = None
    if draw == 'largest':
        key = np.load(osp.join(root, 'formatted_val_salience.npy'))
    elif draw != 'uniform':
        frequency = np.load(osp.join(root,
                                     'formatted_train_labels.npy')).sum(0)
        key = np.broadcast_to(
            frequency if draw == 'commonest' else -frequency, truth.shape)
    return observe_labels(truth.astype(np.int64),
                          'uniform' if key is None else 'largest',
                          salience=key) == 1


def refusal(err):
    """Why a calibration refused, short: ``3 of 20 classes have fewer than
    4`` (observed positives in the validation split)."""
    return str(err).split(' observed positives')[0]


def recall(hit, positives):
    """The share of ``positives`` that ``hit`` predicts, in percent."""
    return float(100 * (hit & positives).sum() / positives.sum())


def calibration(scores_prefix, draw, data_root):
    """What the label-set calibrations give when the validation split's
    single positives follow ``draw``: the estimate of m against the true
    m, the class priors' error with the true m, and the test recall of
    conformal thresholds, per class and pooled (target 1 - ALPHA on
    observed positives), on every test positive and on those the draw
    chooses; for an estimate or thresholds refused (a class observed too
    rarely), why."""
    from spml_mm.evaluation.calibration import (CalibrationError,
                                                class_priors,
                                                conformal_thresholds,
                                                estimate_positives_per_image,
                                                global_conformal_threshold)
    val = np.load(scores_prefix + '_val.npz')
    test = np.load(scores_prefix + '_test.npz')
    # the suites validate on full labels
    full = (val['known'] == 1).astype(float)
    observed = observed_val(draw, data_root)
    assert observed.shape == full.shape
    m_true = float(full.sum(1).mean())
    priors = class_priors(observed, m_true)
    found = dict(m_true=m_true,
                 prior_error=float(100 * np.abs(priors - full.mean(0)).mean()),
                 observed_min_class=int(observed.sum(0).min()))
    try:
        found['m_est'] = float(
            estimate_positives_per_image(val['scores'], observed)[0])
    except CalibrationError as err:  # a class never observed
        found['m_refused'] = refusal(err)
    truth = test['known'] == 1
    chosen = chosen_test(truth, draw, data_root)
    pooled, _ = global_conformal_threshold(val['scores'], observed, ALPHA)
    hit = test['scores'] >= pooled
    found.update(pooled_recall=recall(hit, truth),
                 pooled_chosen_recall=recall(hit, chosen))
    try:
        thresholds, _ = conformal_thresholds(val['scores'], observed, ALPHA)
    except CalibrationError as err:  # a class with too few observations
        return dict(found, conformal_refused=refusal(err))
    hit = test['scores'] >= thresholds
    per_class = (hit & truth).sum(0) / np.maximum(truth.sum(0), 1)
    return dict(found, conformal_recall=recall(hit, truth),
                conformal_chosen_recall=recall(hit, chosen),
                conformal_min_class_recall=float(100 * per_class.min()))


def collect(args):
    """Every finished run's test mAP and calibration, by draw and method."""
    from benchmark.suites import label_of
    rows = {}
    name = accuracy_name(args)
    for draw in ('uniform', *args.draws):
        out = osp.join(REPO, args.work_root, draw)
        path = osp.join(out, f'{name}.json')
        if draw == 'uniform' and args.uniform_from:
            path = osp.join(REPO, args.uniform_from)
        if not osp.isfile(path):
            continue
        with open(path) as f:
            results = json.load(f)
        for method in METHODS:
            keys = [k for k in (method, 'gr') if k in results]
            key = keys[0] if keys and (method == 'grloss' or
                                       keys[0] == method) else method
            for seed in map(str, args.seeds):
                run_ = results.get(key, {}).get(seed)
                if not run_:
                    continue
                row = dict(method=method, label=label_of(method), draw=draw,
                           seed=int(seed), mAP=run_['mAP'],
                           seconds=run_.get('seconds'))
                prefix = osp.join(out, 'scores', name, f'{key}_seed{seed}')
                if osp.isfile(prefix + '_val.npz') and (
                        draw != 'uniform' or not args.uniform_from):
                    row.update(calibration(prefix, draw, args.data_root))
                rows[f'{draw}/{method}/{seed}'] = row
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--suite', default='demo',
                        choices=['demo', 'proxy-voc'])
    parser.add_argument('--regime', default='linear',
                        choices=['linear', 'finetune'],
                        help='proxy suite: frozen backbone on cached '
                        'features, or the whole network fine-tuned')
    parser.add_argument('--fraction', type=float, default=1.,
                        help='proxy suite: at this share of its size')
    parser.add_argument('--methods', nargs='+', default=list(METHODS),
                        choices=METHODS)
    parser.add_argument('--draws', nargs='+', default=['commonest', 'rarest'],
                        choices=DRAWS)
    parser.add_argument('--seeds', nargs='+', type=int, default=[0])
    parser.add_argument('--work-root', default='work_dirs/draws')
    parser.add_argument('--out-dir', default='work_dirs/draws')
    parser.add_argument('--data-root', default=None,
                        help='demo suite: the demo dataset to train on '
                        '(default data/demo; generated when absent, with '
                        '--num-train official-train images)')
    parser.add_argument('--num-train', type=int, default=4000)
    parser.add_argument('--uniform-from', default=None,
                        help='an accuracy json whose runs stand in for the '
                        'uniform draw instead of training it')
    parser.add_argument('--note', default=None,
                        help='what ran, for the section (kept from the json '
                        'when not given)')
    parser.add_argument('--conclusion', default=None,
                        help='what the section\'s numbers say (kept from '
                        'the json when not given)')
    parser.add_argument('--render', action='store_true',
                        help='only render the page from the json')
    parser.add_argument('--collect', action='store_true',
                        help='train nothing: collect the finished runs '
                        'into the json and render the page')
    args = parser.parse_args(argv)
    if args.suite == 'demo':
        args.section = 'demo'
        args.data_root = args.data_root or 'data/demo'
    elif args.data_root:
        parser.error('--data-root: a proxy suite trains on its own proxy')
    else:
        args.section = run_name(args.suite, args.regime, args.fraction)
        args.data_root = proxy_root(args.suite, args.fraction)
    args.work_root = args.work_root if args.suite == 'demo' else osp.join(
        args.work_root, args.section)
    json_path = osp.join(REPO, args.out_dir, 'draws.json')
    if not args.render:
        draws = list(args.draws)
        if not args.uniform_from:
            draws = ['uniform'] + draws
        if args.suite == 'demo':
            ensure_data(args.data_root, args.num_train)
        else:
            prepare_suite(args.suite, args.regime, args.fraction)
        for method in args.methods * (not args.collect):
            for draw in draws:
                run(method, draw, args)
        rows = collect(args)
        # read just before writing: other suites' sections as they are now
        data = load_json(json_path) or dict(suites={})
        before = data['suites'].get(args.section, {})
        title = SUITE_TITLES[args.suite] + (
            '' if args.suite == 'demo' else f', {args.regime} regime' +
            ('' if args.fraction == 1 else
             f', at {args.fraction:g} of its size'))
        data['suites'][args.section] = dict(
            title=title, seeds=args.seeds, draws=args.draws,
            note=before.get('note', '') if args.note is None else args.note,
            conclusion=before.get('conclusion', '')
            if args.conclusion is None else args.conclusion,
            uniform_from=args.uniform_from, data_root=args.data_root,
            teacher_noise=TEACHER_NOISE, rows=rows)
        os.makedirs(osp.dirname(json_path), exist_ok=True)
        with open(json_path, 'w') as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write('\n')
    with open(json_path[:-len('.json')] + '.md', 'w') as f:
        f.write(render(load_json(json_path)))
    print(f'written {json_path} and draws.md')


if __name__ == '__main__':
    main()
