"""What model selection costs without full validation labels.

Each method trains once per learning rate and seed with every epoch's
checkpoint kept (stopping rules off: every epoch trains), and every
checkpoint scores the validation and test splits. Each selection criterion
then picks the (learning rate, epoch) it prefers for a method and seed, and
the test mAP (full labels) of that pick is what the user gets:

- ``full``: validation mAP on full labels (the benchmark's usual choice);
- ``observed``: ``spml/mAP_observed`` on the validation images'
  single-positive labels, unobserved entries counted negative;
- ``subset-N``: validation mAP on N fully labelled validation images
  (``val_full_subset=N``), averaged over several draws
  (``val_subset_seed``).

Writes ``selection.json`` (every checkpoint's values: an interrupted
invocation resumes where it stopped), ``selection_table.md`` and
``selection.png`` into ``--out-dir`` (default ``work_dirs/results``;
``--out-dir docs/results`` for the tracked files that
``docs/results/selection.md`` reads).

Example:
    PYTHONPATH=.dev_scripts python -m benchmark.selection --fraction 0.2 \\
        --lrs 1e-4 1e-3 1e-2 --seeds 0 1 2 --out-dir docs/results
"""
import argparse
import glob
import json
import os
import os.path as osp
import re
import shutil
import sys

import numpy as np
from mmengine.utils import ProgressBar

from benchmark.pages.selection import summarize, write_page
from benchmark.pages.results import report_written
from benchmark.suites import (METHODS, STUDY_METHODS, proxy_options,
                              suite_config)
from benchmark.training import prepare_suite, run
from benchmark.common import REPO, add_out_dir, command_line, write_json

SUBSETS = [50, 100, 200, 500]


def train_all_epochs(config, work_dir, seed, lr, options):
    """Train every epoch of ``config`` and keep each epoch's checkpoint
    (afresh: a run an interrupted invocation left is removed first)."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, config))
    opts = [f'randomness.seed={seed}', f'optim_wrapper.optimizer.lr={lr}',
            'default_hooks.checkpoint.max_keep_ckpts=-1', *options]
    if cfg.get('default_hooks', {}).get('early_stopping'):
        opts.append('default_hooks.early_stopping.max_drop=inf')
    shutil.rmtree(work_dir, ignore_errors=True)
    run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir,
         '--cfg-options', *opts])


def checkpoint_scores(config, work_dir, options):
    """Scores of every epoch's checkpoint on the validation and test splits,
    and the splits' full and observed labels."""
    import torch
    from mmengine.config import Config
    from mmengine.runner import Runner

    from spml_mm.utils import ConfigOptionsAction
    cfg = Config.fromfile(osp.join(REPO, config))
    parsed = argparse.ArgumentParser()
    parsed.add_argument('--o', nargs='+', action=ConfigOptionsAction,
                        default={})
    cfg.merge_from_dict(parsed.parse_args(['--o', *options]).o
                        if options else {})
    for loader in ('val_dataloader', 'test_dataloader'):
        cfg[loader].num_workers = 0
        cfg[loader].persistent_workers = False
    cfg.work_dir = osp.join(work_dir, 'scoring')
    runner = Runner.from_cfg(cfg)
    model = runner.model.eval()
    loaders = dict(val=runner.val_dataloader, test=runner.test_dataloader)
    checkpoints = sorted(
        glob.glob(osp.join(work_dir, 'epoch_*.pth')),
        key=lambda p: int(re.search(r'epoch_(\d+)', p).group(1)))
    scores = {}
    for path in checkpoints:
        runner.load_checkpoint(path)
        epoch = int(re.search(r'epoch_(\d+)', path).group(1))
        scores[epoch] = {}
        for split, loader in loaders.items():
            rows = []
            with torch.no_grad():
                for batch in loader:
                    rows += [s.pred_score.float().cpu().numpy()
                             for s in model.val_step(batch)]
            scores[epoch][split] = np.stack(rows)
    labels = {}
    for split, loader in loaders.items():
        dataset = loader.dataset
        labels[split] = full_labels(dataset)
    labels['val_observed'] = observed_labels(cfg)
    return scores, labels


def full_labels(dataset):
    """The (N, C) 0/1 label matrix of an evaluation dataset, in its order."""
    matrix = np.zeros((len(dataset), len(dataset.metainfo['classes'])))
    for i in range(len(dataset)):
        matrix[i, dataset.get_data_info(i)['gt_label']] = 1
    return matrix


def observed_labels(cfg):
    """The validation split's observed labels (+1 at the single positive,
    0 elsewhere), in the order of its full-label dataset."""
    from mmpretrain.registry import DATASETS
    dataset_cfg = cfg.val_dataloader.dataset.copy()
    dataset_cfg.val_labels = 'observed'
    # the labels only: no loading, and the pipeline keeps the unknowns
    dataset_cfg.pipeline = [dict(type='PackInputs',
                                 algorithm_keys=('gt_label_neg', ))]
    dataset = DATASETS.build(dataset_cfg)
    return full_labels(dataset)


def run_values(scores, labels, subsets, draws):
    """Per epoch: the test mAP and every criterion's validation value
    (``subset-N``: one value per draw, the draws of ``val_full_subset=N``
    with ``val_subset_seed`` 0, 1, ...)."""
    from spml_mm.evaluation.metrics import mean_average_precision
    n = len(labels['val'])
    draws_of = {size: [np.random.RandomState(seed).permutation(n)[:size]
                       for seed in range(draws)]
                for size in subsets if size <= n}
    values = {}
    for epoch, split in scores.items():
        val = split['val']
        entry = dict(
            test=mean_average_precision(split['test'], labels['test']),
            full=mean_average_precision(val, labels['val']),
            observed=mean_average_precision(val, labels['val_observed']))
        for size, rows in draws_of.items():
            entry[f'subset-{size}'] = [
                mean_average_precision(val[r], labels['val'][r])
                for r in rows]
        values[str(epoch)] = entry
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--suite', default='proxy-voc',
                        choices=['proxy-voc', 'proxy-coco'])
    parser.add_argument('--fraction', type=float, default=1.,
                        help='a proxy of this share of the suite\'s size')
    parser.add_argument('--methods', nargs='+', default=STUDY_METHODS,
                        choices=list(METHODS))
    parser.add_argument('--lrs', nargs='+', type=float,
                        default=[1e-4, 1e-3, 1e-2])
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    parser.add_argument('--subsets', nargs='+', type=int, default=SUBSETS)
    parser.add_argument('--draws', type=int, default=10,
                        help='random subsets per size')
    parser.add_argument('--work-root', default='work_dirs/selection')
    add_out_dir(parser, 'selection.json, selection_table.md and '
                'selection.png')
    args = parser.parse_args()
    prepare_suite(args.suite, 'linear', args.fraction)
    os.makedirs(args.out_dir, exist_ok=True)
    json_path = osp.join(args.out_dir, 'selection.json')
    results = {}
    if osp.isfile(json_path):
        with open(json_path) as f:
            results = json.load(f)
    todo = [(m, s, lr) for s in args.seeds for m in args.methods
            for lr in args.lrs
            if f'{lr:g}' not in results.get(m, {}).get(str(s), {})]
    bar = ProgressBar(len(todo))
    for method, seed, lr in todo:
        config = suite_config(args.suite, method, 'linear')
        options = proxy_options(args.suite, args.fraction, config)
        work_dir = osp.join(args.work_root, method, f'lr{lr:g}',
                            f'seed{seed}')
        train_all_epochs(config, work_dir, seed, lr, options)
        scores, labels = checkpoint_scores(config, work_dir, options)
        values = run_values(scores, labels, args.subsets, args.draws)
        results.setdefault(method, {}).setdefault(str(seed), {})[
            f'{lr:g}'] = values
        write_json(json_path, results)
        bar.update()
    size = '' if args.fraction == 1 else f' at {args.fraction:g} of its size'
    title = (f'{"VOC" if args.suite == "proxy-voc" else "COCO"}-like proxy'
             f'{size}, linear regime')
    command = command_line(sys.argv)
    write_page(summarize(results, args.methods), args.out_dir, command,
               title)
    report_written(args.out_dir,
                   ['selection.json', 'selection_table.md', 'selection.png'])


if __name__ == '__main__':
    main()
