"""From scores to label sets: how well each calibration without full labels
chooses the thresholds, for every method.

    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.label_sets --out-dir docs/results
    python -m benchmark.label_sets --suite proxy-voc --fraction 0.2 \
        --out-dir docs/results
    python -m benchmark.label_sets --methods an grloss --render-only
    python -m benchmark.label_sets --real --out-dir docs/results

Trains each method of a suite (seed 0, its config through
``tools/train.py``; on a proxy suite at the rate its accuracy page's search
chose) and keeps its best checkpoint's raw scores with their labels on the
test and validation splits (``label_sets/<suite>/<method>_{test,val}.npz``,
written by ``tools/test.py --out-scores``) and the validation images'
observed labels (``<method>_valobs.npy``); kept runs are not trained again.
Then it chooses thresholds on the validation split and measures the label
sets on the test split: the head's 0.5, each calibration of
``tools/calibrate.py`` that needs no full labels (conformal per class at
alpha 0.1 and 0.2, one pooled conformal threshold, class-prior matching and
top-k with the data's mean number of labels per image, class-prior
matching with each class's prior estimated from the validation scores and
observed positives, ``tools/calibrate.py``'s default), the F1 references on
a fully labelled validation subset and on the whole split, and the oracle
(F1-optimal on the test labels themselves), and the estimate's error against
the data's number and class priors. Each suite is one section of ``label_sets.{json,md,png}``; a run
updates its own. ``--real`` instead tries the estimate on ImageNet-ReaL's
label sets (timm's ``imagenet_real_labels.json``) with scores simulated
from them, and updates that section.
"""
import argparse
import json
import os
import os.path as osp
import sys

import numpy as np

from spml_mm.apis import get_method, list_methods

from benchmark.pages.accuracy import chosen_lrs
from benchmark.pages.label_sets import (ALPHAS, FULL_SUBSET, conclusion,
                                        plot, render)
from benchmark.pages.results import report_written
from benchmark.suites import (SUITE_TITLES, proxy_options, run_name,
                              suite_config, suite_methods)
from benchmark.training import prepare_suite, resume_option, run
from benchmark.common import (REPO, RESULTS_DIR, add_out_dir, command_line,
                          machine_summary)

#: The methods of the page: every single-positive method and the bounds
#: (not those that read a teacher's scores, nor partial labels' BCE).
PAGE_METHODS = tuple(m for m in list_methods(variants=True)
                     if get_method(m).kind != 'teacher' and m != 'partial')


def train_and_dump(args, method, prefix):
    """Train ``method`` in the suite (resuming an interrupted run), at the
    rate its accuracy page's search chose where there is one, and keep the
    best checkpoint's scores: ``<prefix>_test.npz``, ``<prefix>_val.npz``
    (with the config's validation labels) and ``<prefix>_valobs.npy`` (the
    validation images' observed labels)."""
    from spml_mm.utils import find_best_checkpoint
    name = run_name(args.suite, args.regime, args.fraction)
    config = suite_config(args.suite, method, args.regime)
    options = [f'randomness.seed={args.seed}',
               *proxy_options(args.suite, args.fraction, config)]
    searched = osp.join(RESULTS_DIR, f'accuracy_{name}_lr_search.json')
    if args.suite != 'demo' and osp.isfile(searched):
        with open(searched) as f:
            lr = chosen_lrs(json.load(f)).get(method)
        options += [f'optim_wrapper.optimizer.lr={lr}'] if lr else []
    work_dir = osp.join(REPO, args.work_root, name, method)
    run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir,
         *resume_option(work_dir), '--cfg-options', *options])
    os.makedirs(osp.dirname(prefix), exist_ok=True)
    test = [sys.executable, 'tools/test.py', config,
            find_best_checkpoint(work_dir), '--work-dir', work_dir]
    for part, extra in (('test', []),
                        ('val', ['test_dataloader.dataset.split=val'])):
        run([*test, '--out-scores', f'{prefix}_{part}.npz',
             '--cfg-options', *options, *extra])
    np.save(f'{prefix}_valobs.npy', observed_val_labels(config, options))


def observed_val_labels(config, options):
    """The labels (N, C: +1, -1, 0) a single-positive protocol observes on
    the validation images of ``config`` with ``--cfg-options options``: its
    dataset built with ``val_labels='observed'``, no image read."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS

    from spml_mm.evaluation import SPMLAveragePrecision
    from spml_mm.utils import ConfigOptionsAction
    parser = argparse.ArgumentParser()
    parser.add_argument('--o', nargs='+', action=ConfigOptionsAction)
    cfg = Config.fromfile(osp.join(REPO, config))
    cfg.merge_from_dict(parser.parse_args(['--o', *options]).o)
    init_default_scope('mmpretrain')
    dataset = DATASETS.build(dict(cfg.val_dataloader.dataset,
                                  val_labels='observed',
                                  val_full_subset=None, pipeline=[]))
    return np.stack([
        SPMLAveragePrecision.known_labels(dataset.get_data_info(i),
                                          cfg.model.head.num_classes)
        for i in range(len(dataset))
    ])


def load_scores(prefix):
    """The kept scores and labels of one run (see :func:`train_and_dump`)."""
    data = dict(valobs_known=np.load(f'{prefix}_valobs.npy'))
    for part in ('test', 'val'):
        with np.load(f'{prefix}_{part}.npz') as found:
            data[f'{part}_scores'] = found['scores'].astype(np.float64)
            data[f'{part}_known'] = found['known']
            data['classes'] = [str(c) for c in found['classes']]
    return data


def label_set_metrics(predicted, labels):
    """The F1 family of :class:`SPMLLabelSetMetric` on full labels."""
    from spml_mm.evaluation import SPMLLabelSetMetric
    known = np.where(labels == 1, 1, -1).astype(np.int8)
    return SPMLLabelSetMetric().compute_metrics(list(zip(predicted, known)))


def decisions(data, m):
    """Each decision's label sets on the test split (N, C, bool), or why
    its calibration refused (too few observed positives in a class)."""
    from spml_mm.apis import calibrate
    from spml_mm.evaluation import CalibrationError, f1_optimal_thresholds
    from spml_mm.models.heads import apply_decision
    val, test = data['val_scores'], data['test_scores']
    observed, classes = data['valobs_known'], data['classes']
    rng = np.random.RandomState(0)
    subset = rng.choice(len(val), FULL_SUBSET, replace=False)
    sets = {'0.5': test >= 0.5}
    calibrations = {
        'global_0.1': ('global', dict(alpha=0.1)),
        'prior': ('prior', dict(positives_per_image=m)),
        'prior_estimated': ('prior', {}),
        **{f'conformal_{a}': ('conformal', dict(alpha=a)) for a in ALPHAS}
    }
    for key, (method, options) in calibrations.items():
        try:
            record = calibrate(method, val, observed, classes, **options)
        except CalibrationError as err:
            sets[key] = str(err).split(' (')[0]
            continue
        sets[key] = apply_decision(test, record)
    sets['topk'] = apply_decision(
        test, calibrate('topk', val, observed, classes,
                        positives_per_image=m))
    ref, _ = f1_optimal_thresholds(val[subset],
                                   data['val_known'][subset] == 1)
    sets['f1_subset'] = test >= ref
    full, _ = f1_optimal_thresholds(val, data['val_known'] == 1)
    sets['f1_val'] = test >= full
    oracle, _ = f1_optimal_thresholds(test, data['test_known'] == 1)
    sets['oracle'] = test >= oracle
    return sets


def held_out_recall(predicted, labels, seed=1200):
    """Per-class recall on one observed positive per test image (the
    protocol's draw), averaged over the classes, in percent."""
    from spml_mm.datasets import observe_uniform
    observed = observe_uniform(labels.astype(np.int64), 1, 0, seed) == 1
    per_class = [predicted[observed[:, k], k].mean()
                 for k in range(labels.shape[1]) if observed[:, k].any()]
    return 100 * float(np.mean(per_class))


def evaluate(data):
    from spml_mm.evaluation import CalibrationError, mean_average_precision
    labels = (data['test_known'] == 1).astype(np.uint8)
    m = float((data['val_known'] == 1).sum(1).mean())
    sets = decisions(data, m)
    rows = {key: dict(CF1=None, OF1=None, CR=None, refused=pred)
            if isinstance(pred, str) else label_set_metrics(pred, labels)
            for key, pred in sets.items()}
    base, oracle = rows['0.5']['CF1'], rows['oracle']['CF1']
    for row in rows.values():
        row['gap_closed'] = (row['CF1'] - base) / (oracle - base) if \
            oracle > base and row['CF1'] is not None else None
    recall = {}
    for alpha in ALPHAS:
        pred = sets[f'conformal_{alpha}']
        recall[f'{alpha}'] = dict(
            target=100 * (1 - alpha),
            observed=None if isinstance(pred, str) else held_out_recall(
                pred, labels),
            all_positives=rows[f'conformal_{alpha}']['CR'])
    counts = (data['valobs_known'] == 1).sum(0)
    try:
        estimate = estimate_error(data['val_scores'], data['valobs_known'],
                                  data['val_known'] == 1)
    except CalibrationError as err:  # a class without an observed positive
        estimate = dict(positives_per_image=m, refused=str(err))
    return dict(mAP=mean_average_precision(data['test_scores'], labels),
                positives_per_image=m, decisions=rows, estimate=estimate,
                val_images=len(data['valobs_known']),
                observed_per_class=[int(counts.min()), int(counts.max())],
                conformal_recall=recall)


def estimate_error(scores, observed, labels):
    """The estimate of m and of the class priors
    (:func:`spml_mm.evaluation.estimate_positives_per_image`) from
    ``scores`` and the ``observed`` labels, against the full ``labels``
    (N, C, bool) of the same images: m, its estimate and relative error
    (%), the priors' mean absolute error (points), the number of classes
    whose estimate reached the bound no label set allows to pass, for which
    ``tools/calibrate.py`` warns (``at_bound``), and the observation bias:
    at the thresholds of the estimated priors, the recall of the observed
    positives minus that of all positives, averaged over the classes
    (points; 0 if the observed positive were a uniform sample of the
    class's positives)."""
    from spml_mm.evaluation import estimate_positives_per_image
    from spml_mm.evaluation.calibration import (impossible_priors,
                                                prior_thresholds)
    found, priors = estimate_positives_per_image(scores, observed)
    thresholds, _ = prior_thresholds(scores, observed, 1, priors=priors)
    predicted, seen = scores >= thresholds, observed == 1
    true = float(labels.sum(1).mean())
    return dict(positives_per_image=true, estimated=found,
                error=100 * (found - true) / true,
                prior_error=100 * float(np.abs(priors -
                                               labels.mean(0)).mean()),
                at_bound=int(impossible_priors(priors, observed).sum()),
                observed_recall_bias=100 * float(np.mean([
                    predicted[seen[:, k], k].mean() -
                    predicted[labels[:, k], k].mean()
                    for k in range(scores.shape[1])])))


#: ReaL's simulated scores: (a, b), positives ~ Beta(a, b), negatives
#: ~ Beta(b, a): from a clean ranking to a weak one.
REAL_LEVELS = ((20, 2), (10, 2), (6, 2), (4, 2))


def real_label_sets():
    """ImageNet-ReaL's label sets (50,000 validation images, each with the
    classes the ReaL annotators found; the images with none left out), read
    from timm's wheel (``pip install timm``), as an (N, 1000) bool array."""
    try:
        import timm.data
    except ImportError:
        sys.exit('--real reads imagenet_real_labels.json from timm\'s wheel: '
                 'pip install timm (the pretrained extra)')
    path = osp.join(osp.dirname(timm.data.__file__), '_info',
                    'imagenet_real_labels.json')
    with open(path) as f:
        sets = [s for s in json.load(f) if s]
    labels = np.zeros((len(sets), 1000), dtype=bool)
    labels[np.repeat(np.arange(len(sets)), [len(s) for s in sets]),
           np.concatenate(sets)] = True
    return labels


def real_estimates(seed=0, levels=REAL_LEVELS):
    """The estimate of m on ReaL's label sets: one observed positive per
    image drawn uniformly among its labels, scores simulated per level
    (:data:`REAL_LEVELS`), each level's mAP (over 100 random classes with a
    positive) and estimate's error (:func:`estimate_error`)."""
    from spml_mm.evaluation import average_precision_per_class
    labels = real_label_sets()
    rng = np.random.default_rng(seed)
    observed = np.zeros(labels.shape, dtype=np.int8)
    for i, row in enumerate(labels):
        found = np.flatnonzero(row)
        observed[i, found[rng.integers(len(found))]] = 1
    sizes = labels.sum(1)
    shown = rng.choice(np.flatnonzero(labels.any(0)), 100, replace=False)
    rows = []
    for a, b in levels:
        scores = np.where(labels, rng.beta(a, b, labels.shape),
                          rng.beta(b, a, labels.shape)).astype(np.float32)
        ap = average_precision_per_class(scores[:, shown], labels[:, shown])
        rows.append(dict(a=a, b=b, mAP=float(np.mean(ap)),
                         **estimate_error(scores, observed, labels)))
        print(f'Beta({a}, {b}): mAP {rows[-1]["mAP"]:.1f}, m '
              f'{rows[-1]["positives_per_image"]:.3f}, estimate '
              f'{rows[-1]["estimated"]:.3f}', flush=True)
        del scores
    return dict(images=len(labels), classes=labels.shape[1],
                multi_label=100 * float((sizes > 1).mean()), seed=seed,
                levels=rows)


def write_page(results, out_dir):
    json_path = osp.join(out_dir, 'label_sets.json')
    with open(json_path, 'w') as f:
        json.dump(results, f, indent=1)
    with open(osp.join(out_dir, 'label_sets.md'), 'w') as f:
        f.write(render(results))
    plot(results, osp.join(out_dir, 'label_sets.png'))
    report_written(out_dir,
                   ['label_sets.json', 'label_sets.md', 'label_sets.png'])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--suite', choices=tuple(SUITE_TITLES),
                        default='demo')
    parser.add_argument('--regime', choices=('linear', 'finetune'),
                        default='linear', help='proxy suites: the regime')
    parser.add_argument('--fraction', type=float, default=1.,
                        help='proxy suites: the share of the proxy\'s size')
    parser.add_argument('--methods', nargs='+', choices=PAGE_METHODS)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--work-root', default='work_dirs/label_sets')
    parser.add_argument('--render-only', action='store_true',
                        help='train nothing: the page from the kept scores')
    parser.add_argument('--real', action='store_true',
                        help='only the estimate of m on ReaL\'s label sets '
                        'with simulated scores (needs timm)')
    add_out_dir(parser, 'label_sets.{json,md,png} and the kept scores')
    args = parser.parse_args()
    json_path = osp.join(args.out_dir, 'label_sets.json')
    results = dict(suites={})
    if osp.isfile(json_path):
        with open(json_path) as f:
            results = json.load(f)
    if args.real:
        results['real'] = dict(real_estimates(args.seed),
                               command=command_line(sys.argv),
                               machine=machine_summary())
        write_page(results, args.out_dir)
        return
    methods = args.methods or [m for m in PAGE_METHODS
                               if m in suite_methods(args.suite,
                                                     args.regime)]
    name = run_name(args.suite, args.regime, args.fraction)
    kept = osp.join(args.out_dir, 'label_sets', name)
    if not args.render_only:
        prepare_suite(args.suite, args.regime, args.fraction)
    runs = {}
    for method in methods:
        prefix = osp.join(kept, method)
        if not osp.isfile(f'{prefix}_valobs.npy'):
            if args.render_only:
                continue
            print(f'training {method}', flush=True)
            train_and_dump(args, method, prefix)
        runs[method] = evaluate(load_scores(prefix))
        print(f'{method}: CF1 at 0.5 '
              f'{runs[method]["decisions"]["0.5"]["CF1"]:.1f}, oracle '
              f'{runs[method]["decisions"]["oracle"]["CF1"]:.1f}', flush=True)
    if not runs:
        sys.exit(f'no kept scores in {kept}; run without --render-only')
    title = SUITE_TITLES[args.suite] + (
        '' if args.suite == 'demo' else
        f', {args.regime} regime' + ('' if args.fraction == 1 else
                                     f', at {args.fraction:g} of its size'))
    before = results['suites'].get(name, {})
    # a page rendered again names the run that kept the scores
    command, machine = (before['command'], before['machine']) if (
        args.render_only and before) else (command_line(sys.argv),
                                           machine_summary())
    results['suites'][name] = dict(
        title=title, command=command, machine=machine, seed=args.seed,
        positives_per_image=float(np.mean(
            [r['positives_per_image'] for r in runs.values()])),
        runs=runs, conclusion=conclusion(runs))
    write_page(results, args.out_dir)


if __name__ == '__main__':
    main()
