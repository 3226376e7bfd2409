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
documentation pages and the method READMEs quote
(``.dev_scripts/docs_tables.py``).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.accuracy --seeds 0 1 2 --out-dir docs/results
    python -m benchmark.accuracy --quick   # one tiny run per method (CI)
    python -m benchmark.accuracy --suite proxy-voc --seeds 0 1 2
    python -m benchmark.accuracy --suite proxy-voc --lr-search 1e-3 1e-4
    # select epoch, checkpoint and rate on the observed validation labels
    python -m benchmark.accuracy --select-metric spml/mAP_observed \
        --cfg-options val_dataloader.dataset.val_labels=observed
"""
import argparse
import json
import os
import os.path as osp
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from mmengine.utils import ProgressBar

from benchmark.pages.accuracy import (chosen_lrs, summarize,
                                      write_lr_search_page,
                                      write_outputs)
from benchmark.pages.results import report_written
from benchmark.suites import (METHODS, SUITE_TITLES, proxy_options,
                              suite_config, suite_methods)
from benchmark.training import (best_val_map, prepare_suite, record,
                                resume_option, run, searched_run,
                                select_options, test_best,
                                train_and_test)
from benchmark.common import (REPO, WORK_OUT_DIR, command_line, dev_env,
                              is_results_dir)

#: MMEngine's Config.fromfile is not thread-safe (two threads resolving
#: ``mmpretrain::`` bases at once fail in pkg_resources)
CONFIG_LOCK = threading.Lock()
#: quick mode: 2 epochs on 96 images, validated on 200 and tested on 500
#: (the whole splits were a third of each run's time); the methods with an
#: epoch-end update move it to epoch 1 so that it runs once
QUICK_OPTIONS = ['train_cfg.max_epochs=2',
                 'train_dataloader.dataset.indices=96',
                 'val_dataloader.dataset.indices=200',
                 'test_dataloader.dataset.indices=500']
QUICK_METHOD_OPTIONS = {
    'em_apl': ['default_hooks.pseudo_label.warmup_epochs=1'],
    'opml_sp':
    ['default_hooks.pseudo_label.updater.correction_start_epoch=1'],
}


def scores_prefix(args, out_dir, name, method, key):
    """Where a run keeps its score matrices (``scores/<name>/<method>_<key>``
    under the results folder), or None: kept for the proxy suites' runs
    (the evidence, unless ``--quick``) and with ``--keep-scores``."""
    if not (args.keep_scores or (args.suite != 'demo' and not args.quick)):
        return None
    folder = osp.join(out_dir, 'scores', name)
    os.makedirs(folder, exist_ok=True)
    return osp.join(folder, f'{method}_{key}')


def make_parser():
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
                        help='one tiny run per method (2 epochs on 96 '
                        'images, validated on 200, tested on 500)')
    parser.add_argument('--jobs', type=int, default=1,
                        help='runs trained side by side (each a training '
                        'and a test process; make bench-quick runs 2 on '
                        "CI's two cores)")
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
    return parser


def parse_args():
    """The arguments, with the run's names (``name``: of its results files,
    ``runs_root``: of its work dirs, ``title``) and, with ``--searched-lr``,
    the rate search's runs (``searched``) and chosen rates (``lrs``)."""
    parser = make_parser()
    args = parser.parse_args()
    if args.quick:
        args.seeds = args.seeds[:1]
    args.methods = args.methods or suite_methods(args.suite, args.regime)
    for method in args.methods:
        suite_config(args.suite, method, args.regime)
    args.out_dir = args.out_dir or (args.work_root if args.quick else
                                    WORK_OUT_DIR)
    os.makedirs(args.out_dir, exist_ok=True)
    if args.fraction != 1 and args.suite == 'demo':
        parser.error('--fraction applies to the proxy suites')
    reduced = '' if args.fraction == 1 else f'-f{args.fraction:g}'
    args.name = 'accuracy' if args.suite == 'demo' else \
        f'accuracy_{args.suite}_{args.regime}{reduced}'
    args.runs_root = args.work_root if args.suite == 'demo' else osp.join(
        args.work_root, f'{args.suite}_{args.regime}{reduced}')
    args.title = SUITE_TITLES[args.suite] + (
        f', at {args.fraction:g} of its size' if reduced else '')
    args.lrs, args.searched = {}, {}
    if args.searched_lr:
        searched = osp.join(args.out_dir, f'{args.name}_lr_search.json')
        if osp.isfile(searched):
            with open(searched) as f:
                args.searched = json.load(f)
        args.lrs = chosen_lrs(args.searched)
        missing = [m for m in args.methods if m not in args.lrs]
        if missing:
            parser.error(f'--searched-lr: {", ".join(missing)} not in '
                         f'{searched}; run --lr-search first')
    return args


def run_seeds(args, json_path):
    """Train and test every method and seed not yet in ``json_path`` (a
    seed the rate search trained is recorded from it); the results."""
    results = {}
    if osp.isfile(json_path) and not args.rerun:
        with open(json_path) as f:
            results = json.load(f)
    # seed-major: an interrupted run still has every method's first seeds
    todo = [(m, s) for s in args.seeds for m in args.methods
            if str(s) not in results.get(m, {})]
    progress = ProgressBar(len(todo))

    def run_one(method, seed):
        reused = None if args.quick else searched_run(
            args.searched, method, seed, args.cfg_options,
            args.select_metric)
        if reused:  # the same training: its test mAP, not a second run
            entry = dict(
                mAP=reused['test_mAP'], seconds=reused['seconds'],
                select_metric=args.select_metric, lr=args.lrs[method],
                options=reused['options'], from_lr_search=True,
                **{k: reused[k] for k in ('scores', ) if k in reused})
        else:
            entry = run_seed(args, method, seed)
        # record() reads and writes the json under a lock: runs side by
        # side keep each other's entries
        found = record(json_path, method, str(seed), entry)
        progress.update()
        return found

    if args.jobs > 1 and len(todo) > 1:
        # each run waits on its own processes: threads suffice
        pool = ThreadPoolExecutor(args.jobs)
        try:
            for future in [pool.submit(run_one, *job) for job in todo]:
                future.result()  # a failed run fails the invocation
        finally:  # after a failure, the runs not yet started are not
            pool.shutdown(cancel_futures=True)
        with open(json_path) as f:
            results = json.load(f)
    else:
        for job in todo:
            results = run_one(*job)
    print()
    return results


def run_seed(args, method, seed):
    """Train and test one method and seed; its entry in the results."""
    work_dir = osp.join(args.runs_root, method, f'seed{seed}')
    if args.rerun:
        shutil.rmtree(work_dir, ignore_errors=True)
    options = [*QUICK_OPTIONS, *QUICK_METHOD_OPTIONS.get(method, [])
               ] if args.quick else []
    with CONFIG_LOCK:  # runs side by side (--jobs) read configs in turn
        config = suite_config(args.suite, method, args.regime)
        options += proxy_options(args.suite, args.fraction, config) + \
            args.cfg_options
        if method in args.lrs:
            options.append(f'optim_wrapper.optimizer.lr={args.lrs[method]}')
        options += select_options(config, args.select_metric)
    scores = scores_prefix(args, args.out_dir, args.name, method,
                           f'seed{seed}')
    mAP, seconds = train_and_test(config, work_dir, seed, options, scores)
    return dict(
        mAP=mAP, seconds=seconds, select_metric=args.select_metric,
        options=args.cfg_options,
        **({'scores': osp.relpath(scores, args.out_dir)} if scores else {}),
        **({'lr': args.lrs[method]} if method in args.lrs else {}))


def main():
    args = parse_args()
    out_dir, name = args.out_dir, args.name
    prepare_suite(args.suite, args.regime, args.fraction)
    if args.lr_search:
        lr_search(args, name, out_dir, args.runs_root, args.title)
        report_written(out_dir, [f'{name}_lr_search.{ext}'
                                 for ext in ('json', 'md')])
        return
    results = run_seeds(args, osp.join(out_dir, f'{name}.json'))
    before = None
    if args.compare:
        with open(args.compare[0]) as f:
            before = (args.compare[1], summarize(json.load(f), args.methods))
    write_outputs(summarize(results, args.methods), out_dir,
                  command_line(sys.argv), args.quick, before, args.suite,
                  name, args.title, results, args.select_metric)
    report_written(out_dir, [f'{name}.{ext}' for ext in ('json', 'md', 'png')])
    if is_results_dir(out_dir):
        # the numbers the README, the docs and the method READMEs quote
        proc = subprocess.run([sys.executable, '-m', 'docs_tables'],
                              cwd=REPO, capture_output=True, text=True,
                              env=dev_env())
        print(proc.stdout + proc.stderr[-2000:] * (proc.returncode != 0))


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
        resume = [] if args.rerun else resume_option(work_dir)
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


if __name__ == '__main__':
    main()
