"""What the pre-flight answers before the first training step (group
``preflight``): the GPU fast recipe, validation on observed labels with the
default and with a wrong selection key, classes or a split without a
positive, a model that fails on the validation images, an expression in
``--cfg-options``."""
import os
import os.path as osp
import re

import numpy as np

from spml_mm.datasets import split_train_val
from benchmark.faults.harness import (CONFIG, TRAIN_LINE, data_copy,
                                      each, error_line, judged, refusal)


def before_training(log: str, marker: str) -> bool:
    """``marker`` is logged, and before any training iteration."""
    at = log.find(marker)
    train = log.find(TRAIN_LINE)
    return at >= 0 and (train < 0 or at < train)


def refused_before_training(bench, name, options, expect, base=CONFIG,
                            epochs=1):
    """A run that must stop before its first iteration with ``expect``:
    (outcome, result), the refusal with its wall time."""
    work = osp.join(bench.tmp, name)
    rc, log = bench.run(['tools/train.py', bench.config(base=base),
                         '--work-dir', work] +
                        bench.options(epochs=epochs) + options)
    line = error_line(log, expect)
    trained = TRAIN_LINE in log or (osp.isdir(work) and any(
        f.endswith('.pth') for f in os.listdir(work)))
    outcome = (f'refused before training ({bench.seconds:.0f} s): '
               f'{line.split("Error: ", 1)[-1]}'
               if line and not trained else
               f'{"trained" if trained else "stopped"}: '
               f'{error_line(log, "Error") or "exit " + str(rc)}')
    return outcome[:150], judged(not trained, refusal(rc, line),
                                 'silent wrong answer')


def fast_recipe(bench):
    import torch
    config = osp.join(bench.tmp, 'fast.py')
    with open(config, 'w') as f:
        f.write(f"_base_ = ['{bench.config()}', "
                "'spml_mm::_base_/runtime_gpu_fast.py']\n")
    work = osp.join(bench.tmp, 'fast')
    rc, log = bench.run(['tools/train.py', config, '--work-dir', work] +
                        bench.options(epochs=1) +
                        ['train_dataloader.dataset.indices=64'])
    if torch.cuda.is_available():
        ok = rc == 0 and osp.isfile(osp.join(work, 'epoch_1.pth'))
        return ('GPU fast recipe (runtime_gpu_fast.py) via tools/train.py',
                'trained 1 epoch' if ok else
                f'FAILED: {error_line(log, "Error")[:100]}',
                judged(ok, 'right result', 'crash'))
    line = error_line(log, "runner_type='SPMLGPUFastRunner' is the GPU")
    trained = TRAIN_LINE in log
    return ('GPU fast recipe (runtime_gpu_fast.py) via tools/train.py, no '
            'CUDA', f'refused before training ({bench.seconds:.0f} s): '
            f'{line[14:110]}...'
            if line and not trained else
            f'FAILED: {error_line(log, "Error")[:100]}',
            judged(not trained, refusal(rc, line), 'silent wrong answer'))


def observed_default(bench, base, name):
    """Validation on observed labels with the default selection keys."""
    work = osp.join(bench.tmp, name)
    rc, log = bench.run(['tools/train.py', bench.config(base=base),
                         '--work-dir', work] + bench.options(epochs=2) +
                        ['val_dataloader.dataset.val_labels=observed'])
    best = [f for f in os.listdir(work) if f.startswith('best_')] \
        if osp.isdir(work) else []
    ok = (rc == 0 and best and all('mAP_observed' in b for b in best)
          and "save_best='auto' selects on spml/mAP_observed" in log
          and 'Epoch(val) [1]' in log)
    stop = error_line(log, 'Early stopping after epoch')
    return (f'val_labels=observed, default keys ({osp.basename(base)})',
            (f'validated on spml/mAP_observed, best: {", ".join(best)}'
             + (f'; {stop[stop.find("Early"):][:60]}' if stop else ''))
            if ok else f'FAILED: {error_line(log, "Error")[:100]}',
            judged(ok, 'right result', refusal(rc, '')))


def observed_wrong_key(bench):
    outcome, result = refused_before_training(
        bench, 'observed_wrong', [
            'val_dataloader.dataset.val_labels=observed',
            'default_hooks.checkpoint.save_best=spml/mAP'
        ], "save_best='spml/mAP' names a metric")
    return ('val_labels=observed, explicit save_best=spml/mAP', outcome,
            result)


def subset_without_class(bench):
    work = osp.join(bench.tmp, 'subset3')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         work] + bench.options(epochs=1) +
                        ['val_dataloader.dataset.val_full_subset=3'])
    line = error_line(log, 'classes without an AP are left out')
    counted = re.search(r'spml/mAP and spml/mAP_observed over \d+ of 10 '
                        r'classes: \d+ without a positive', line)
    ok = rc == 0 and counted and before_training(log, line)
    return ('val_full_subset=3: classes without a positive',
            f'warned before training: {counted.group(0)} (named); trained'
            if ok else f'FAILED: {line[:100] or error_line(log, "Error")}',
            judged(ok, 'right result', 'silent wrong answer'))


def split_without_positive(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels.npy')
        labels = np.load(path)
        labels[split_train_val(len(labels), 0.2, 1200)[1]] = 0
        np.save(path, labels)

    root = data_copy(bench, 'no_val_positive', damage)
    work = osp.join(bench.tmp, 'no_val_positive_work')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         work] + bench.options(data=root, epochs=1))
    line = error_line(log, 'no class has a positive')
    trained = TRAIN_LINE in log
    return ('validation split without any positive',
            f'refused before training ({bench.seconds:.0f} s): '
            f'{line.split("Error: ", 1)[-1][:100]}'
            if line and not trained else
            f'FAILED: {error_line(log, "Error")[:100]}',
            judged(not trained, refusal(rc, line), 'silent wrong answer'))


def validation_crash(bench):
    """A validation pipeline at 4 px: the model fails on the first sanity
    batch, and the note names the part and its config keys."""
    more = ("val_dataloader = dict(dataset=dict(pipeline=["
            "dict(type='LoadImageFromFile'), dict(type='Resize', scale=4), "
            "dict(type='PackInputs', algorithm_keys=('gt_label_neg', ))]))")
    work = osp.join(bench.tmp, 'small_val')
    rc, log = bench.run(['tools/train.py', bench.config(more=more),
                         '--work-dir', work] + bench.options(epochs=1))
    line = error_line(log, 'Raised by SPMLPreflightHook')
    named = 'look at model' in line and \
        'val_dataloader.dataset.pipeline' in line
    return ('validation pipeline at 4 px (the model fails on its images)',
            f'stopped before training ({bench.seconds:.0f} s): the error, '
            'then '
            f'"{line[line.find("in the model"):][:110]}..."' if named else
            f'FAILED: {line[:100] or error_line(log, "Error")[:100]}',
            judged(named and TRAIN_LINE not in log, refusal(rc, line),
                   'crash'))


def expression_option(bench):
    """A pipeline written in --cfg-options as a list of dict(...) calls."""
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir',
                         osp.join(bench.tmp, 'expression')] +
                        bench.options(epochs=1) + [
                            "val_dataloader.dataset.pipeline=["
                            "dict(type='LoadImageFromFile'), "
                            "dict(type='Resize', scale=4)]"])
    line = error_line(log, 'is an expression, which is not parsed')
    return ('--cfg-options KEY=[dict(type=..., a=1), ...]',
            f'refused ({bench.seconds:.0f} s): '
            f'{line.split("parsed: ", 1)[-1][:90]}' if line else
            f'FAILED: {error_line(log, "Error")[:100]}',
            refusal(rc, line))


def scenarios(bench):
    yield lambda: fast_recipe(bench)
    yield lambda: observed_default(bench, CONFIG, 'observed_an')
    yield lambda: observed_default(bench,
                                   'configs/grloss/grloss_vgg11bn_demo.py',
                                   'observed_gr')
    yield from each(bench, observed_wrong_key, subset_without_class,
                    split_without_positive, validation_crash,
                    expression_option)
