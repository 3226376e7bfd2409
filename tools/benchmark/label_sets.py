"""From scores to label sets: how well each calibration without full labels
chooses the thresholds, for every method.

    python -m tools.benchmark.label_sets --out-dir docs/results
    python -m tools.benchmark.label_sets --methods an gr --render-only

Trains each method on the demo dataset (seed 0, its demo config through
``tools/train.py``), keeps the validation and test logits of its best
checkpoint (``label_sets/<suite>/<method>.npz``, float16, with the labels;
kept runs are not trained again), then chooses thresholds on the validation
split and measures the label sets on the test split: the head's 0.5, each
calibration of ``tools/calibrate.py`` that needs no full labels (conformal
per class at alpha 0.1 and 0.2, one pooled conformal threshold, class-prior
matching and top-k with the data's mean number of labels per image), the F1
reference on a fully labelled validation subset, and the oracle (F1-optimal
on the test labels themselves). Writes ``label_sets.{json,md,png}``.
"""
import argparse
import json
import os
import os.path as osp
import sys

import numpy as np

from tools.benchmark.accuracy import METHODS, run
from tools.benchmark.results_page import (REPO, add_out_dir, command_line,
                                          machine_summary, report_written)

#: The methods of the page: every single-positive method and the bounds.
PAGE_METHODS = ('an', 'full', 'gr', 'em', 'em_apl', 'lasd', 'opml',
                'opml_sp', 'epr', 'role', 'll_r', 'll_ct', 'll_cp')
#: Fully labelled validation images of the F1 reference.
FULL_SUBSET = 100
#: The conformal targets checked on held-out observed positives.
ALPHAS = (0.1, 0.2)
#: Decisions in the tables' order: key -> column title.
DECISIONS = {
    '0.5': '0.5',
    'global_0.1': 'global, alpha 0.1',
    'conformal_0.1': 'conformal, alpha 0.1',
    'conformal_0.2': 'conformal, alpha 0.2',
    'prior': 'class prior',
    'topk': 'top-k',
    'f1_subset': f'F1 on {FULL_SUBSET} labelled val images',
    'oracle': 'oracle (test F1)',
}
#: The decisions chosen without any full label.
WITHOUT_FULL = ('global_0.1', 'conformal_0.1', 'conformal_0.2', 'prior',
                'topk')


def train_and_score(method, seed, work_root, npz):
    """Train ``method`` (resuming an interrupted run) and keep its logits
    on the validation and test splits with their labels."""
    from mmengine.config import Config
    from mmengine.registry import DATASETS, init_default_scope

    from spml_mm.apis import load_model, score_split
    from spml_mm.evaluation import SPMLAveragePrecision
    from spml_mm.utils import find_best_checkpoint

    config = METHODS[method][1]
    work_dir = osp.join(work_root, method)
    resume = ['--resume'] if osp.isfile(
        osp.join(work_dir, 'last_checkpoint')) else []
    run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir,
         *resume, '--cfg-options', f'randomness.seed={seed}'])
    cfg = Config.fromfile(osp.join(REPO, config))
    model = load_model(cfg, find_best_checkpoint(work_dir))
    out = {}
    for split in ('val', 'test'):
        scored = score_split(model, cfg, split)
        scores = np.clip(scored['scores'], 1e-6, 1 - 1e-6)
        out[f'{split}_logits'] = np.log(scores / (1 - scores)).astype(
            np.float16)
        out[f'{split}_labels'] = (scored['known'] == 1).astype(np.uint8)
    # the labels a single-positive protocol observes on the val images
    init_default_scope('mmpretrain')
    observed = DATASETS.build(
        dict(cfg.val_dataloader.dataset, val_labels='observed',
             val_full_subset=None, pipeline=[]))
    out['val_observed'] = np.stack([
        SPMLAveragePrecision.known_labels(observed.get_data_info(i),
                                          cfg.model.head.num_classes)
        for i in range(len(observed))
    ])
    os.makedirs(osp.dirname(npz), exist_ok=True)
    np.savez_compressed(npz, classes=np.array(scored['classes']), **out)


def sigmoid(logits):
    return 1 / (1 + np.exp(-logits.astype(np.float64)))


def label_set_metrics(predicted, labels):
    """The F1 family of :class:`SPMLLabelSetMetric` on full labels."""
    from spml_mm.evaluation import SPMLLabelSetMetric
    known = np.where(labels == 1, 1, -1).astype(np.int8)
    return SPMLLabelSetMetric().compute_metrics(list(zip(predicted, known)))


def decisions(data, m):
    """Each decision's label sets on the test split (N, C, bool)."""
    from spml_mm.apis import calibrate
    from spml_mm.evaluation import f1_optimal_thresholds
    val, test = sigmoid(data['val_logits']), sigmoid(data['test_logits'])
    observed, classes = data['val_observed'], list(data['classes'])
    rng = np.random.RandomState(0)
    subset = rng.choice(len(val), FULL_SUBSET, replace=False)
    sets = {'0.5': test >= 0.5}
    thresholds = {
        'global_0.1': calibrate('global', val, observed, classes, 0.1),
        'prior': calibrate('prior', val, observed, classes,
                           positives_per_image=m),
    }
    for alpha in ALPHAS:
        thresholds[f'conformal_{alpha}'] = calibrate(
            'conformal', val, observed, classes, alpha)
    for key, record in thresholds.items():
        sets[key] = test >= np.array(record['thresholds'])
    k = calibrate('topk', val, observed, classes,
                  positives_per_image=m)['topk']
    top = np.argsort(-test, axis=1)[:, :k]
    sets['topk'] = np.zeros_like(test, dtype=bool)
    np.put_along_axis(sets['topk'], top, True, axis=1)
    ref, _ = f1_optimal_thresholds(val[subset], data['val_labels'][subset])
    sets['f1_subset'] = test >= ref
    oracle, _ = f1_optimal_thresholds(test, data['test_labels'])
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
    from spml_mm.evaluation import mean_average_precision
    labels = data['test_labels']
    m = float(data['val_labels'].sum(1).mean())
    sets = decisions(data, m)
    rows = {key: label_set_metrics(pred, labels)
            for key, pred in sets.items()}
    base, oracle = rows['0.5']['CF1'], rows['oracle']['CF1']
    for row in rows.values():
        row['gap_closed'] = (row['CF1'] - base) / (oracle - base) if \
            oracle > base else None
    recall = {f'{alpha}': dict(
        target=100 * (1 - alpha),
        observed=held_out_recall(sets[f'conformal_{alpha}'], labels),
        all_positives=rows[f'conformal_{alpha}']['CR']) for alpha in ALPHAS}
    return dict(mAP=mean_average_precision(sigmoid(data['test_logits']),
                                           labels),
                positives_per_image=m, decisions=rows,
                conformal_recall=recall)


def fmt(value, digits=1):
    return '-' if value is None else f'{value:.{digits}f}'


def render(results):
    """The page's Markdown from its json."""
    from tools.benchmark.accuracy import METHODS as LABELS
    lines = [
        '# From scores to label sets: thresholds without full labels', '',
        f'`{results["command"]}` on {results["machine"]}.', '',
        'Label sets on the demo\'s test split from the best validation '
        'checkpoint of each method (seed 0): thresholds chosen on the '
        'validation split, with its observed labels only (one positive per '
        'image) unless the column says otherwise; m, the mean number of '
        'labels per image, is the data\'s '
        f'({results["positives_per_image"]:.2f} on the demo). Percent; '
        '"closed" is the share of the CF1 gap between the 0.5 threshold and '
        'the oracle that the best calibration without full labels closes.',
        '']
    runs = results['runs']
    for metric in ('CF1', 'OF1'):
        lines += [f'**{metric}**', '',
                  '| method | mAP | ' + ' | '.join(DECISIONS.values()) +
                  (' | best without full labels | closed |'
                   if metric == 'CF1' else ' |'),
                  '| --- ' * (len(DECISIONS) + (4 if metric == 'CF1' else 2))
                  + '|']
        for method, run_ in runs.items():
            rows = run_['decisions']
            cells = [fmt(run_['mAP'])] + [fmt(rows[k][metric])
                                          for k in DECISIONS]
            if metric == 'CF1':
                best = max(WITHOUT_FULL, key=lambda k: rows[k]['CF1'])
                cells += [DECISIONS[best], fmt(
                    None if rows[best]['gap_closed'] is None else
                    100 * rows[best]['gap_closed'], 0)]
            lines.append(f'| {LABELS[method][0]} | ' + ' | '.join(cells)
                         + ' |')
        lines.append('')
    lines += [
        '**Conformal thresholds: recall reached on the test split**, per '
        'class and averaged over the classes, on one observed positive per '
        'test image (held out: the thresholds saw only validation images) '
        'and on all test positives (CR), against the target 1 - alpha.', '',
        '| method | ' + ' | '.join(
            f'alpha {a}: observed | all (CR)' for a in ALPHAS) + ' |',
        '| --- ' * (1 + 2 * len(ALPHAS)) + '|']
    for method, run_ in runs.items():
        rec = run_['conformal_recall']
        lines.append(f'| {LABELS[method][0]} | ' + ' | '.join(
            f'{fmt(rec[str(a)]["observed"])} | {fmt(rec[str(a)]["all_positives"])}'
            for a in ALPHAS) + ' |')
    lines += ['', '![CF1 per method and calibration](label_sets.png)', '',
              results['conclusion'], '']
    return '\n'.join(lines)


def conclusion(runs):
    """What the numbers say: the calibration to use by default."""
    gaps = {k: [r['decisions'][k]['gap_closed'] for r in runs.values()
                if r['decisions'][k]['gap_closed'] is not None]
            for k in WITHOUT_FULL}
    mean = {k: float(np.mean(v)) for k, v in gaps.items() if v}
    best = max(mean, key=mean.get)
    reached = {k: sum(g >= 0.75 for g in v) for k, v in gaps.items()}
    closes = [label_of(m) for m, r in runs.items()
              if r['decisions'][best]['gap_closed'] is not None
              and r['decisions'][best]['gap_closed'] < 0.75]
    misses = {a: [label_of(m) for m, r in runs.items()
                  if abs(r['conformal_recall'][str(a)]['observed'] -
                         100 * (1 - a)) > 2] for a in ALPHAS}
    text = (f'Across the {len(runs)} methods, {DECISIONS[best]} closes the '
            f'most of the CF1 gap without full labels on average '
            f'({100 * mean[best]:.0f}%; ' + ', '.join(
                f'{DECISIONS[k]} {100 * v:.0f}%' for k, v in mean.items()
                if k != best) + '), and closes at least three quarters of '
            f'it for {reached[best]} of {len(gaps[best])} methods')
    text += (f' (not for {", ".join(closes)}).' if closes else '.')
    for alpha, names in misses.items():
        text += (f' Conformal at alpha {alpha} reaches its target recall '
                 f'{100 * (1 - alpha):.0f}% within 2 points on held-out '
                 'observed positives for '
                 f'{len(runs) - len(names)} of {len(runs)} methods' +
                 (f' (not for {", ".join(names)})' if names else '') + '.')
    return text


def label_of(method):
    return METHODS[method][0]


def plot(results, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    runs = results['runs']
    keys = list(DECISIONS)
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(runs)), 4))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        ax.bar(np.arange(len(runs)) + i * width,
               [r['decisions'][key]['CF1'] for r in runs.values()], width,
               label=DECISIONS[key])
    ax.set_xticks(np.arange(len(runs)) + 0.4 - width / 2)
    ax.set_xticklabels([label_of(m) for m in runs], rotation=30,
                       ha='right')
    ax.set_ylabel('test CF1 (%)')
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--methods', nargs='+', choices=PAGE_METHODS,
                        default=list(PAGE_METHODS))
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--work-root', default='work_dirs/label_sets')
    parser.add_argument('--render-only', action='store_true',
                        help='train nothing: the page from the kept logits')
    add_out_dir(parser, 'label_sets.{json,md,png} and the logits')
    args = parser.parse_args()
    kept = osp.join(args.out_dir, 'label_sets', 'demo')
    runs = {}
    for method in args.methods:
        npz = osp.join(kept, f'{method}.npz')
        if not osp.isfile(npz):
            if args.render_only:
                continue
            print(f'training {method}', flush=True)
            train_and_score(method, args.seed,
                            osp.join(REPO, args.work_root), npz)
        with np.load(npz) as data:
            runs[method] = evaluate(dict(data))
        print(f'{method}: CF1 at 0.5 '
              f'{runs[method]["decisions"]["0.5"]["CF1"]:.1f}, oracle '
              f'{runs[method]["decisions"]["oracle"]["CF1"]:.1f}', flush=True)
    if not runs:
        sys.exit(f'no kept logits in {kept}; run without --render-only')
    results = dict(
        command=command_line(sys.argv), machine=machine_summary(),
        seed=args.seed,
        positives_per_image=np.mean(
            [r['positives_per_image'] for r in runs.values()]),
        runs=runs, conclusion=conclusion(runs))
    with open(osp.join(args.out_dir, 'label_sets.json'), 'w') as f:
        json.dump(results, f, indent=1)
    with open(osp.join(args.out_dir, 'label_sets.md'), 'w') as f:
        f.write(render(results))
    plot(results, osp.join(args.out_dir, 'label_sets.png'))
    report_written(args.out_dir,
                   ['label_sets.json', 'label_sets.md', 'label_sets.png'])


if __name__ == '__main__':
    main()
