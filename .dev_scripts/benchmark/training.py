"""Train and test through ``tools/train.py`` and ``tools/test.py``, as the
benchmark tools run their configs, and keep the runs in a results json.
"""
import argparse
import fcntl
import glob
import json
import os
import os.path as osp
import re
import subprocess
import sys
import time

from benchmark.pages.accuracy import chosen_lrs
from benchmark.suites import (PROXY_DATA, feature_cache, proxy_options,
                              proxy_root, suite_config)
from benchmark.common import REPO, write_json


def run(cmd):
    """Run ``cmd`` in the repository root; its output, or a RuntimeError
    with the end of its errors."""
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd)} failed:\n{proc.stderr[-4000:]}')
    return proc.stdout + proc.stderr


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


def resume_option(work_dir):
    """``--resume`` where a run an interrupted invocation left in
    ``work_dir`` has a checkpoint (the training tool refuses a new run over
    an earlier run's checkpoints)."""
    return ['--resume'] if osp.isfile(
        osp.join(work_dir, 'last_checkpoint')) else []


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


def train_and_test(config, work_dir, seed, options, scores=None):
    """Train one configuration and return its test mAP and training time.
    A run an interrupted invocation left in ``work_dir`` is resumed."""
    opts = ['--cfg-options', f'randomness.seed={seed}', *options]
    start = time.time()
    run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir,
         *resume_option(work_dir), *opts])
    seconds = time.time() - start
    return test_best(config, work_dir, opts, scores), seconds


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


def training_set(config, options=()):
    """The training dataset a config builds (with ``--cfg-options``)."""
    from mmengine.config import Config, DictAction
    from mmpretrain.registry import DATASETS

    import spml_mm  # noqa: F401
    cfg = Config.fromfile(osp.join(REPO, config))
    if options:
        parser = argparse.ArgumentParser()
        parser.add_argument('--o', nargs='+', action=DictAction)
        cfg.merge_from_dict(parser.parse_args(['--o', *options]).o)
    dataset = dict(cfg.train_dataloader.dataset)
    dataset['data_root'] = osp.join(REPO, dataset['data_root'])
    return DATASETS.build(dataset)


def write_teacher(config, noise, path, crops, seed=0, options=()):
    """Write a synthetic teacher for a config's training set; return its
    mAP (percent) on those images."""
    from spml_mm.benchmarks.synthetic_teacher import (full_label_matrix,
                                                      write_synthetic_teacher)
    from spml_mm.evaluation.metrics import mean_average_precision
    dataset = training_set(config, options)
    scores = write_synthetic_teacher(dataset, path, noise, seed, crops)
    return float(mean_average_precision(scores, full_label_matrix(dataset)))
