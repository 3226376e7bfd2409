"""Train and test every SPML method on the demo dataset, several seeds each.

Every run goes through the real configs, ``tools/train.py`` and
``tools/test.py``; the test mAP of the best validation checkpoint is kept.
Writes ``accuracy.{json,md,png}`` into ``--out-dir`` (default
``work_dirs/results``; with ``--out-dir docs/results`` the tracked page, and
``docs/RESULTS.md`` is re-rendered). ``--suite proxy-voc`` or ``proxy-coco``
runs the proxy benchmarks instead (``tools/make_proxy_data.py``;
EfficientNet-Lite0 from its ImageNet weights, ``--regime linear`` on cached
features or ``finetune``) and writes
``accuracy_<suite>_<regime>.{json,md,png}``; missing proxy data and feature
caches are made first. A run resumes from the json already in ``--out-dir``.
Results written to ``docs/results`` also rewrite the numbers the README, the
documentation pages and the method READMEs quote (``tools/docs_tables.py``).

Example:
    python -m tools.benchmark.accuracy --seeds 0 1 2 --out-dir docs/results
    python -m tools.benchmark.accuracy --quick   # one tiny run per method (CI)
    python -m tools.benchmark.accuracy --suite proxy-voc --seeds 0 1 2
    python -m tools.benchmark.accuracy --suite proxy-voc --lr-search 1e-3 1e-4
    # select epoch, checkpoint and rate on the observed validation labels
    python -m tools.benchmark.accuracy --select-metric spml/mAP_observed \
        --cfg-options val_dataloader.dataset.val_labels=observed
"""
import argparse
import fcntl
import glob
import json
import os
import os.path as osp
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from mmengine.utils import ProgressBar

from tools.benchmark.results_page import report_written
from tools.common import (REPO, WORK_OUT_DIR, command_line, is_results_dir,
                          machine_summary, write_json)

#: method name -> (label in tables, demo config)
METHODS = {
    'an': ('AN', 'configs/an/an_vgg11bn_demo.py'),
    'full': ('full-label BCE (upper bound)', 'configs/an/an_vgg11bn-full_demo.py'),
    'gr': ('GR', 'configs/grloss/grloss_vgg11bn_demo.py'),
    'em': ('EM', 'configs/em/em_vgg11bn_demo.py'),
    'em_apl': ('EM + APL', 'configs/em_apl/em_apl_vgg11bn_demo.py'),
    'lasd': ('LASD', 'configs/lasd/lasd_vgg11bn_demo.py'),
    'opml': ('OPML', 'configs/opml/opml_vgg11bn_demo.py'),
    'opml_sp': ('OPML-SP', 'configs/opml/opml_vgg11bn-sp_demo.py'),
    'epr': ('EPR', 'configs/epr/epr_vgg11bn_demo.py'),
    'role': ('ROLE', 'configs/role/role_vgg11bn_demo.py'),
    'll_r': ('LL-R', 'configs/ll_r/ll_r_vgg11bn_demo.py'),
    'll_ct': ('LL-Ct', 'configs/ll_ct/ll_ct_vgg11bn_demo.py'),
    'll_cp': ('LL-Cp', 'configs/ll_cp/ll_cp_vgg11bn_demo.py'),
    'partial': ('partial-BCE, 1 positive + 2 negatives (partial labels)',
                'configs/an/an_vgg11bn-partial_demo.py'),
    'vlpl': ('VLPL', 'configs/vlpl/vlpl_vgg11bn_demo.py'),
    'aevlp': ('AEVLP', 'configs/aevlp/aevlp_vgg11bn_demo.py'),
}
#: methods that read a teacher's score file: run only when named
#: (``--methods``), their file in ``--cfg-options
#: model.head.label_bank.score_file=...``; config stems as PROXY_CONFIGS
TEACHER_CONFIGS = {
    'vlpl': 'vlpl/efficientnet-lite0{}_proxy-{}.py',
    'aevlp': 'aevlp/efficientnet-lite0{}_proxy-{}.py',
}
#: proxy suites: method -> config stem under configs/<folder>/, per regime
#: (the papers' methods and the AN and full-label references; the baselines
#: EPR, ROLE and the LL family have demo and ResNet-50 configs only)
PROXY_CONFIGS = {
    'an': 'an/efficientnet-lite0{}_proxy-{}.py',
    'full': 'an/efficientnet-lite0{}-full_proxy-{}.py',
    'gr': 'grloss/efficientnet-lite0{}_proxy-{}.py',
    'em': 'em/efficientnet-lite0{}_proxy-{}.py',
    'em_apl': 'em_apl/efficientnet-lite0{}_proxy-{}.py',
    'lasd': 'lasd/efficientnet-lite0{}_proxy-{}.py',
    'opml': 'opml/efficientnet-lite0{}_proxy-{}.py',
    'opml_sp': 'opml/efficientnet-lite0{}-sp_proxy-{}.py',
}
#: proxy suites: data generation arguments (COCO-like at a tenth of COCO)
PROXY_DATA = {
    'proxy-voc': ['--like', 'voc'],
    'proxy-coco': ['--like', 'coco', '--fraction', '0.1'],
}
LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')
SUITE_TITLES = {
    'demo': 'Demo dataset',
    'proxy-voc': 'VOC-like proxy',
    'proxy-coco': 'COCO-like proxy (a tenth of COCO\'s split sizes)',
}


def suite_methods(suite):
    """The methods a suite runs by default (not those of a teacher)."""
    return [m for m in (METHODS if suite == 'demo' else PROXY_CONFIGS)
            if m not in TEACHER_CONFIGS]


def suite_config(suite, method, regime='linear'):
    """The config a method trains with in a suite."""
    if suite == 'demo':
        return METHODS[method][1]
    stems = {**PROXY_CONFIGS, **TEACHER_CONFIGS}
    if method not in stems:
        raise ValueError(
            f'{METHODS[method][0]} has no {suite} config; the proxy suites '
            f'run {", ".join(stems)}')
    infix = '-linear' if regime == 'linear' else ''
    return 'configs/' + stems[method].format(infix, suite[6:])


def proxy_root(suite, fraction=1.):
    """Data folder of a proxy suite, at ``fraction`` of its default size."""
    return f'data/{suite}' if fraction == 1 else f'data/{suite}-f{fraction:g}'


def proxy_options(suite, fraction=1., config=None):
    """``--cfg-options`` that point a proxy config at a reduced proxy (and,
    for a linear-regime ``config``, at that proxy's feature cache)."""
    if suite == 'demo' or fraction == 1:
        return []
    options = [f'{loader}.dataset.data_root={proxy_root(suite, fraction)}'
               for loader in LOADERS]
    if config is not None and '-linear' in config:
        options += cache_file_options(config,
                                      feature_cache(suite, fraction))
    return options


def feature_cache(suite, fraction=1.):
    """The feature cache of a proxy suite: the configs' file, or the same
    name under a reduced proxy's folder."""
    from mmengine.config import Config
    default = Config.fromfile(
        osp.join(REPO, suite_config(suite, 'an', 'finetune'))).feature_cache
    if fraction == 1:
        return default
    return osp.join(proxy_root(suite, fraction), 'features',
                    osp.basename(default))


def cache_file_options(config, cache):
    """``--cfg-options`` setting every ``cache_file`` of a config's data
    loaders (``LoadCachedFeatures``, at any depth of the pipelines)."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, config)).to_dict()
    options = []

    def visit(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(
            node) if isinstance(node, (list, tuple)) else ()
        for key, value in items:
            if key == 'cache_file':
                options.append(f'{path}cache_file={cache}')
            else:
                visit(value, f'{path}{key}.')

    for loader in LOADERS:
        visit(cfg[loader], f'{loader}.')
    return options


def prepare_suite(suite, regime, fraction=1.):
    """Make a proxy's data, EfficientNet-Lite0's ImageNet weights and
    (linear regime) feature cache if missing."""
    if suite == 'demo':
        if not osp.isfile(
                osp.join(REPO, 'data/demo/formatted_val_labels.npy')):
            run([sys.executable, 'tools/make_demo_data.py'])
        return
    root = osp.join(REPO, proxy_root(suite, fraction))
    if not osp.isfile(osp.join(root, 'formatted_val_labels_obs.npy')):
        data = list(PROXY_DATA[suite])
        if fraction != 1:  # a share of the suite's own size
            default = float(data[data.index('--fraction') + 1]) \
                if '--fraction' in data else 1.
            data = data[:2] + ['--fraction', f'{default * fraction:g}']
        run([sys.executable, 'tools/make_proxy_data.py', *data,
             '--out-dir', root])
    if not osp.isfile(osp.join(REPO,
                               'checkpoints/efficientnet-lite0_timm.pth')):
        run([sys.executable, 'tools/convert_efficientnet_lite.py'])
    if regime != 'linear':
        return
    cache = feature_cache(suite, fraction)
    if not osp.isfile(osp.join(REPO, cache)):
        options = proxy_options(suite, fraction)
        run([sys.executable, 'tools/cache_features.py',
             suite_config(suite, 'an', 'finetune'), '--threads', '1',
             '--out', cache] + (['--cfg-options', *options]
                                if options else []))


#: quick mode: 2 epochs on 96 images; the methods with an epoch-end update
#: move it to epoch 1 so that it runs once
QUICK_OPTIONS = ['train_cfg.max_epochs=2', 'train_dataloader.dataset.indices=96']
QUICK_METHOD_OPTIONS = {
    'em_apl': ['default_hooks.pseudo_label.warmup_epochs=1'],
    'opml_sp': ['default_hooks.pseudo_label.updater.correction_start_epoch=1'],
}


def record(json_path, method, key, entry):
    """Add one run to a results json and return the whole file: under an
    exclusive lock on its folder, read just before writing, so that the runs
    of other invocations on the same file (e.g. methods run side by side)
    are kept; written to a temporary file and renamed, so an interrupted
    write leaves the previous file."""
    folder = os.open(osp.dirname(osp.abspath(json_path)), os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        results = {}
        if osp.isfile(json_path):
            with open(json_path) as f:
                results = json.load(f)
        results.setdefault(method, {})[key] = entry
        write_json(json_path, results)
    finally:
        os.close(folder)  # and the lock with it
    return results


def run(cmd):
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd)} failed:\n{proc.stderr[-4000:]}')
    return proc.stdout + proc.stderr


def best_val_map(work_dir, key='spml/mAP'):
    """The best validation value of the metric ``key`` over the trainings of
    ``work_dir`` (a run and its resumptions), from the scalars MMEngine's
    logger writes for each validation (the test writes none)."""
    found = []
    for path in glob.glob(osp.join(work_dir, '*', 'vis_data',
                                   'scalars.json')):
        with open(path) as f:
            found += [entry[key] for entry in map(json.loads, f)
                      if key in entry]
    return max(found)


def select_options(config, key):
    """``--cfg-options`` that keep the best checkpoint, and stop early where
    the config does, on the validation metric ``key``."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, config))
    options = [f'default_hooks.checkpoint.save_best={key}']
    if cfg.get('default_hooks', {}).get('early_stopping'):
        options.append(f'default_hooks.early_stopping.monitor={key}')
    options += [f'custom_hooks.{i}.monitor={key}'
                for i, hook in enumerate(cfg.get('custom_hooks', []))
                if hook.get('type') == 'SPMLEarlyStoppingHook']
    return options


def test_best(config, work_dir, opts, scores=None):
    """The test mAP of the best validation checkpoint a training left in
    ``work_dir`` (as the run records it). With ``scores``, its raw scores
    and labels on the test and validation splits are kept in
    ``<scores>_test.npz`` and ``<scores>_val.npz`` (``tools/test.py
    --out-scores``), for analyses that need no model."""
    from spml_mm.utils import find_best_checkpoint
    test = [sys.executable, 'tools/test.py', config,
            find_best_checkpoint(work_dir), '--work-dir', work_dir]
    dump = ['--out-scores', f'{scores}_test.npz'] if scores else []
    out = run([*test, *dump, *opts])
    if scores:
        run([*test, '--out-scores', f'{scores}_val.npz', *opts,
             'test_dataloader.dataset.split=val'])
    found = re.findall(r'Epoch\(test\).*?spml/mAP: ([\d.]+)', out)
    return float(found[-1])


def scores_prefix(args, out_dir, name, method, key):
    """Where a run keeps its score matrices (``scores/<name>/<method>_<key>``
    under the results folder), or None: kept for the proxy suites' runs
    (the evidence, unless ``--quick``) and with ``--keep-scores``."""
    if not (args.keep_scores or (args.suite != 'demo' and not args.quick)):
        return None
    folder = osp.join(out_dir, 'scores', name)
    os.makedirs(folder, exist_ok=True)
    return osp.join(folder, f'{method}_{key}')


def train_and_test(config, work_dir, seed, options, scores=None):
    """Train one configuration and return its test mAP and training time.
    A run an interrupted invocation left in ``work_dir`` is resumed (the
    training tool refuses a new run over an earlier run's checkpoints)."""
    opts = ['--cfg-options', f'randomness.seed={seed}', *options]
    resume = ['--resume'] if osp.isfile(
        osp.join(work_dir, 'last_checkpoint')) else []
    start = time.time()
    run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir,
         *resume, *opts])
    seconds = time.time() - start
    return test_best(config, work_dir, opts, scores), seconds


def compile_options(entry):
    """The ``compile`` options a recorded run trained with (none: it
    trained eagerly)."""
    return [o for o in entry.get('options', []) if o.startswith('compile')]


def searched_run(found, method, seed, cfg_options, select_metric):
    """The rate search's run of ``method`` at its chosen rate if it is the
    run this seed would train (the same seed, ``--cfg-options`` and
    selection metric, and tested), else None."""
    if not found.get(method):
        return None
    entry = found[method][f'{chosen_lrs(found)[method]:g}']
    same = (entry.get('seed'), entry.get('options'),
            entry['select_metric']) == (seed, cfg_options, select_metric)
    return entry if same and 'test_mAP' in entry else None


def summarize(results, methods):
    """Mean, spread and the share of the AN-to-full gap per method."""
    rows = {}
    for name in methods:
        runs = results.get(name, {})
        if runs:
            maps = np.array([r['mAP'] for r in runs.values()])
            secs = np.array([r['seconds'] for r in runs.values()])
            rows[name] = dict(mean=maps.mean(), std=maps.std(),
                              n=len(maps), seconds=secs.mean())
    if 'an' in rows and 'full' in rows:
        gap = rows['full']['mean'] - rows['an']['mean']
        for row in rows.values():
            row['gap_closed'] = (row['mean'] - rows['an']['mean']) / gap
    return rows


def write_outputs(rows, out_dir, command, quick, before=None, suite='demo',
                  output='accuracy', title=None, runs=None,
                  select_metric='spml/mAP'):
    """The table, plot and page; ``before`` (rows of an earlier run) adds
    its mean and std and the change of the mean per method. ``suite`` (or
    ``title``) names the data in the text, ``output`` the output files;
    ``runs`` (the results json) adds the learning rates runs were given;
    ``select_metric`` is the validation metric that chose the epoch."""
    title = title or SUITE_TITLES[suite]
    extra = ' {} (%) | change |'.format(before[0]) if before else ''
    lines = [
        '| method | test mAP (%) | spread (std) | seeds | share of AN-to-full '
        f'gap closed | training time (s) |{extra}',
        '| --- ' * (6 + 2 * bool(before)) + '|'
    ]
    for name, row in rows.items():
        gap = row.get('gap_closed')
        gap = '-' if gap is None else f'{100 * gap:.0f}%'
        line = (f'| {METHODS[name][0]} | {row["mean"]:.2f} | '
                f'{row["std"]:.2f} | {row["n"]} | {gap} | '
                f'{row["seconds"]:.0f} |')
        old = before[1].get(name) if before else None
        if old:
            line += (f' {old["mean"]:.2f} +- {old["std"]:.2f} | '
                     f'{row["mean"] - old["mean"]:+.2f} |')
        elif before:
            line += ' - | - |'
        lines.append(line)
    lrs = {name: {r['lr'] for r in results.values() if 'lr' in r}
           for name, results in (runs or {}).items()}
    chosen = [f'{METHODS[n][0]} {", ".join(f"{lr:g}" for lr in sorted(v))}'
              for n, v in lrs.items() if v and n in rows]
    if chosen:
        lines += ['', 'Learning rates, each method\'s best validation mAP '
                  f'of `{output}_lr_search.md`: ' + '; '.join(chosen) + '.']
    compiled = [r for results in (runs or {}).values()
                for r in results.values() if compile_options(r)]
    if compiled:
        modes = sorted({o for r in compiled for o in compile_options(r)})
        lines += ['', f'{len(compiled)} of '
                  f'{sum(len(v) for v in runs.values())} runs trained with '
                  'the train step compiled (' +
                  ', '.join(f'`{m}`' for m in modes) + '), the rest '
                  'eagerly: the same computation, rounded differently, which '
                  'a method that amplifies rounding follows like another '
                  'seed.']
    note = ' (quick mode: 2 epochs on 96 images; not meaningful)' if quick \
        else ''
    md = '\n'.join([
        f'{title}, test mAP of the best validation epoch (on '
        f'`{select_metric}`){note}; '
        'mean and population standard deviation over the seeds.', '',
        *lines, '', f'Command: `{command}`', '',
        f'Machine: {machine_summary()}', '', f'![accuracy]({output}.png)', ''
    ])
    with open(osp.join(out_dir, f'{output}.md'), 'w') as f:
        f.write(md)

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    names = list(rows)
    ax.bar([METHODS[n][0].replace(' (upper bound)', '') for n in names],
           [rows[n]['mean'] for n in names],
           yerr=[rows[n]['std'] for n in names], capsize=4,
           color=['#888' if n in ('an', 'full') else '#3a7' for n in names])
    low = min(rows[n]['mean'] - rows[n]['std'] for n in names)
    ax.set_ylim(max(0, low - 5), 100)
    ax.set_ylabel('test mAP (%)')
    ax.set_title(f'SPML methods, {title} (mean and std over '
                 'seeds)')
    plt.setp(ax.get_xticklabels(), rotation=20, ha='right')
    fig.tight_layout()
    fig.savefig(osp.join(out_dir, f'{output}.png'), dpi=120)
    plt.close(fig)
    print(md)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--suite', default='demo',
                        choices=['demo', 'proxy-voc', 'proxy-coco'])
    parser.add_argument('--regime', default='linear',
                        choices=['linear', 'finetune'],
                        help='proxy suites: frozen backbone on cached '
                        'features, or the whole network fine-tuned')
    parser.add_argument('--fraction', type=float, default=1.,
                        help='proxy suites: train and test on a proxy of this '
                        'share of the suite\'s size (written to '
                        'data/<suite>-f<fraction>, with its own feature '
                        'cache)')
    parser.add_argument('--cfg-options', nargs='+', default=[],
                        metavar='KEY=VALUE',
                        help='passed to every training and test, e.g. the '
                        'learning rate a --lr-search chose')
    parser.add_argument('--lr-search', nargs='+', type=float, metavar='LR',
                        help='train the first seed at each learning rate and '
                        'report the best validation mAP per method (the '
                        'test set does not choose; the chosen rate\'s '
                        'run, tested, is --searched-lr\'s run of that '
                        'seed)')
    parser.add_argument('--searched-lr', action='store_true',
                        help='train each method at the learning rate of its '
                        'best validation mAP in this suite\'s --lr-search '
                        'results')
    parser.add_argument('--select-metric', default='spml/mAP', metavar='KEY',
                        help='validation metric that chooses the best '
                        'checkpoint, early stopping and the --lr-search '
                        'rate, e.g. spml/mAP_observed with observed '
                        'validation labels (named in the results)')
    parser.add_argument('--methods', nargs='+', choices=list(METHODS),
                        help="default: every method of the suite")
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    parser.add_argument('--quick', action='store_true',
                        help='one tiny run per method (2 epochs, 96 images)')
    parser.add_argument('--work-root', default='work_dirs/benchmark')
    parser.add_argument('--out-dir', default=None,
                        help=f'where the results go (default: {WORK_OUT_DIR}'
                        '; quick: the work root); --out-dir docs/results '
                        'updates the tracked pages and docs/RESULTS.md')
    parser.add_argument('--rerun', action='store_true',
                        help='run the requested methods and seeds again, '
                        'replacing their results in the json file')
    parser.add_argument('--keep-scores', action='store_true',
                        help='keep each run\'s test and validation scores '
                        '(scores/<page>/<method>_<seed or rate>_{test,val}.'
                        'npz in the results folder; the proxy suites always '
                        'keep them)')
    parser.add_argument('--compare', nargs=2, metavar=('JSON', 'LABEL'),
                        help='add the means of an earlier run (its '
                        'accuracy.json) under LABEL, with the change')
    args = parser.parse_args()
    if args.quick:
        args.seeds = args.seeds[:1]
    args.methods = args.methods or suite_methods(args.suite)
    for method in args.methods:
        suite_config(args.suite, method, args.regime)
    out_dir = args.out_dir or (args.work_root if args.quick else WORK_OUT_DIR)
    os.makedirs(out_dir, exist_ok=True)
    if args.fraction != 1 and args.suite == 'demo':
        parser.error('--fraction applies to the proxy suites')
    reduced = '' if args.fraction == 1 else f'-f{args.fraction:g}'
    name = 'accuracy' if args.suite == 'demo' else \
        f'accuracy_{args.suite}_{args.regime}{reduced}'
    work_root = args.work_root if args.suite == 'demo' else osp.join(
        args.work_root, f'{args.suite}_{args.regime}{reduced}')
    title = SUITE_TITLES[args.suite] + (
        f', at {args.fraction:g} of its size' if reduced else '')
    lrs, found = {}, {}
    if args.searched_lr:
        searched = osp.join(out_dir, f'{name}_lr_search.json')
        if osp.isfile(searched):
            with open(searched) as f:
                found = json.load(f)
        lrs = chosen_lrs(found)
        missing = [m for m in args.methods if m not in lrs]
        if missing:
            parser.error(f'--searched-lr: {", ".join(missing)} not in '
                         f'{searched}; run --lr-search first')
    prepare_suite(args.suite, args.regime, args.fraction)
    if args.lr_search:
        lr_search(args, name, out_dir, work_root, title)
        report_written(out_dir, [f'{name}_lr_search.{ext}'
                                 for ext in ('json', 'md')])
        return

    json_path = osp.join(out_dir, f'{name}.json')
    results = {}
    if osp.isfile(json_path) and not args.rerun:
        with open(json_path) as f:
            results = json.load(f)
    # seed-major: an interrupted run still has every method's first seeds
    todo = [(m, s) for s in args.seeds for m in args.methods
            if str(s) not in results.get(m, {})]
    progress = ProgressBar(len(todo))
    for method, seed in todo:
        reused = None if args.quick else searched_run(
            found, method, seed, args.cfg_options, args.select_metric)
        if reused:  # the same training: its test mAP, not a second run
            results = record(json_path, method, str(seed), dict(
                mAP=reused['test_mAP'], seconds=reused['seconds'],
                select_metric=args.select_metric, lr=lrs[method],
                options=reused['options'], from_lr_search=True,
                **{k: reused[k] for k in ('scores', ) if k in reused}))
            progress.update()
            continue
        work_dir = osp.join(work_root, method, f'seed{seed}')
        if args.rerun:
            shutil.rmtree(work_dir, ignore_errors=True)
        options = [*QUICK_OPTIONS, *QUICK_METHOD_OPTIONS.get(method, [])
                   ] if args.quick else []
        config = suite_config(args.suite, method, args.regime)
        options += proxy_options(args.suite, args.fraction, config) + \
            args.cfg_options
        if method in lrs:
            options.append(f'optim_wrapper.optimizer.lr={lrs[method]}')
        options += select_options(config, args.select_metric)
        scores = scores_prefix(args, out_dir, name, method, f'seed{seed}')
        mAP, seconds = train_and_test(config, work_dir, seed, options,
                                      scores)
        results = record(json_path, method, str(seed), dict(
            mAP=mAP, seconds=seconds, select_metric=args.select_metric,
            options=args.cfg_options,
            **({'scores': osp.relpath(scores, out_dir)} if scores else {}),
            **({'lr': lrs[method]} if method in lrs else {})))
        progress.update()
    print()
    command = command_line(sys.argv)
    before = None
    if args.compare:
        with open(args.compare[0]) as f:
            before = (args.compare[1], summarize(json.load(f), args.methods))
    write_outputs(summarize(results, args.methods), out_dir, command,
                  args.quick, before, args.suite, name, title, results,
                  args.select_metric)
    report_written(out_dir, [f'{name}.{ext}' for ext in ('json', 'md', 'png')])
    if is_results_dir(out_dir):
        # the numbers the README, the docs and the method READMEs quote;
        # run as its command, since docs_tables imports this module
        proc = subprocess.run([sys.executable, 'tools/docs_tables.py'],
                              cwd=REPO, capture_output=True, text=True)
        print(proc.stdout + proc.stderr[-2000:] * (proc.returncode != 0))


def chosen_lrs(found):
    """Per method, the searched learning rate of the best validation mAP."""
    return {method: float(max(runs, key=lambda lr: runs[lr]['val_mAP']))
            for method, runs in found.items() if runs}


def grid_position(runs):
    """Where a method's chosen rate lies among the rates of its search
    (``runs``: rate -> run): ``'interior'``, ``'top edge'`` or ``'bottom
    edge'`` (the highest or lowest searched: a better rate may lie past
    it), or ``'one rate'``."""
    rates = sorted(float(lr) for lr in runs)
    if len(rates) < 2:
        return 'one rate'
    best = float(max(runs, key=lambda lr: runs[lr]['val_mAP']))
    return ('top edge' if best == rates[-1] else
            'bottom edge' if best == rates[0] else 'interior')


def lr_search_table(found, suite, regime):
    """The lines of the learning-rate table from ``<name>_lr_search.json``
    (``found``): every method and rate of the json, since invocations run
    side by side (one per method, each with its optimizer's grid) share
    one table; the last column says whether the chosen rate is interior."""
    rates = sorted({float(lr) for runs in found.values() for lr in runs})
    lines = ['| method | config | ' + ' | '.join(
        f'lr {lr:g}' for lr in rates) + ' | chosen | in the grid |',
             '| --- ' * (len(rates) + 4) + '|']
    for method in [m for m in METHODS if m in found]:
        runs = found[method]
        cells = [runs.get(f'{lr:g}', {}).get('val_mAP') for lr in rates]
        lines.append(f'| {METHODS[method][0]} | '
                     f'`{suite_config(suite, method, regime)}` | ' +
                     ' | '.join('-' if c is None else f'{c:.2f}'
                                for c in cells) +
                     f' | {chosen_lrs(found)[method]:g} | '
                     f'{grid_position(runs)} |')
    return lines


def lr_search(args, name, out_dir, work_root, title):
    """Best validation mAP per method and learning rate (first seed),
    resumable through ``<name>_lr_search.json``; the table marks each
    method's best rate."""
    json_path = osp.join(out_dir, f'{name}_lr_search.json')
    found = {}
    if osp.isfile(json_path) and not args.rerun:
        with open(json_path) as f:
            found = json.load(f)
    seed = args.seeds[0]
    todo = [(m, lr) for m in args.methods for lr in args.lr_search
            if f'{lr:g}' not in found.get(m, {})]
    progress = ProgressBar(len(todo))
    for method, lr in todo:
        config = suite_config(args.suite, method, args.regime)
        work_dir = osp.join(work_root, 'lr_search', method, f'lr{lr:g}')
        opts = ['--cfg-options', f'randomness.seed={seed}',
                f'optim_wrapper.optimizer.lr={lr}',
                *proxy_options(args.suite, args.fraction, config),
                *args.cfg_options,
                *select_options(config, args.select_metric)]
        # a run an interrupted invocation left is resumed from its last
        # checkpoint; without one it starts again
        resume = ['--resume'] if osp.isfile(osp.join(
            work_dir, 'last_checkpoint')) and not args.rerun else []
        if not resume:
            shutil.rmtree(work_dir, ignore_errors=True)
        start = time.time()
        run([sys.executable, 'tools/train.py', config, '--work-dir',
             work_dir, *resume, *opts])
        seconds = time.time() - start
        val_mAP = best_val_map(work_dir, args.select_metric)
        # tested too, so that the chosen rate's run is the seeds' first run
        scores = scores_prefix(args, out_dir, name, method, f'lr{lr:g}')
        found = record(json_path, method, f'{lr:g}', dict(
            val_mAP=val_mAP, select_metric=args.select_metric,
            seconds=seconds, seed=seed, options=args.cfg_options,
            test_mAP=test_best(config, work_dir, opts, scores),
            **({'scores': osp.relpath(scores, out_dir)} if scores else {})))
        progress.update()
    write_lr_search_page(found, out_dir, name, title, args.suite,
                         args.regime, seed, args.select_metric,
                         command_line(sys.argv))


def write_lr_search_page(found, out_dir, name, title, suite, regime, seed,
                         select_metric, command):
    """``<name>_lr_search.md`` of a rate search's results json ``found``,
    each method's best rate marked."""
    tested = any('test_mAP' in r for runs in found.values()
                 for r in runs.values())
    md = '\n'.join([
        f'{title}, {regime} regime: best validation '
        f'`{select_metric}` over the epochs per learning rate (seed '
        f'{seed}; ' + ('the test set does not choose the rate; where a '
                       'search run was tested, the chosen rate\'s run is '
                       f'seed {seed} of the seeds table).' if tested else
                       'the test set is not used).'), '',
        *lr_search_table(found, suite, regime), '',
        'In the grid: the chosen rate is interior, or the highest (top '
        'edge) or lowest (bottom edge) searched, where a better rate may '
        'lie past it.', '',
        f'Command: `{command}`', '',
        f'Machine: {machine_summary()}', ''
    ])
    with open(osp.join(out_dir, f'{name}_lr_search.md'), 'w') as f:
        f.write(md)
    print(md)


if __name__ == '__main__':
    main()
