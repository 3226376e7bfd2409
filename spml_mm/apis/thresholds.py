"""Calibrated label-set decisions and the file that keeps them beside a
checkpoint.

A thresholds file (json) holds, for one model, either one threshold per
class (``thresholds``) or a number of labels per image (``topk``), the class
names they were calibrated for and how: ``tools/calibrate.py`` writes it,
``tools/predict.py``, ``tools/test.py``, ``tools/export_onnx.py`` and
:class:`~spml_mm.apis.SPMLInferencer` read it. By default it lies beside the
checkpoint (:func:`default_thresholds_path`).
"""
import json
import math
import os
import os.path as osp
from typing import Optional, Sequence

import numpy as np
from mmengine.config import Config
from mmpretrain.registry import MODELS

from spml_mm.evaluation.calibration import (conformal_thresholds,
                                            f1_optimal_thresholds,
                                            global_conformal_threshold,
                                            prior_thresholds)
from spml_mm.models.heads import SPMLLinearClsHead

#: The calibrations of :func:`calibrate`.
METHODS = ('conformal', 'global', 'prior', 'topk', 'f1')
#: The ``format`` every thresholds file carries.
FORMAT = 'spml-mm thresholds 1'


def default_thresholds_path(checkpoint: str) -> str:
    """``<checkpoint without .pth>_thresholds.json``."""
    return osp.splitext(checkpoint)[0] + '_thresholds.json'


def calibrate(method: str,
              scores: np.ndarray,
              known: np.ndarray,
              classes: Sequence[str],
              alpha: float = 0.1,
              positives_per_image: Optional[float] = None) -> dict:
    """Choose the label-set decision of ``method`` on a calibration split.

    Args:
        method (str): One of :data:`METHODS`: ``'conformal'`` (per class,
            recall >= 1 - alpha on the observed positives), ``'global'``
            (one threshold, the same over all classes' observed positives
            pooled), ``'prior'`` (each class predicted on its estimated
            prior's share of images), ``'topk'`` (the k = round(m) best
            classes of each image) or ``'f1'`` (per class, the best F1 on
            fully labelled images).
        scores (np.ndarray): Raw scores (N, C) of the calibration images.
        known (np.ndarray): Their labels (N, C): +1 known positive, -1 known
            negative, 0 unknown. ``'f1'`` reads the fully labelled rows
            (no 0), the others the known positives.
        classes (Sequence[str]): The class names.
        alpha (float): Miss rate of ``'conformal'`` and ``'global'``.
        positives_per_image (float, optional): The mean number m of labels
            per image, which ``'prior'`` and ``'topk'`` need.

    Returns:
        dict: The thresholds file's content (without ``format``).
    """
    if method not in METHODS:
        raise ValueError(f'method must be one of {METHODS}, got {method!r}')
    if method in ('prior', 'topk') and positives_per_image is None:
        raise ValueError(
            f'--method {method} needs the mean number of labels per image '
            '(--positives-per-image M): it is not known from single '
            'positives; take it from your data\'s description or a few '
            'fully labelled images')
    record = dict(method=method, classes=list(classes),
                  calibration_images=len(scores))
    if method in ('conformal', 'global'):
        fn = conformal_thresholds if method == 'conformal' else \
            global_conformal_threshold
        args = (classes, ) if method == 'conformal' else ()
        thresholds, counts = fn(scores, known, alpha, *args)
        record.update(alpha=alpha)
    elif method == 'prior':
        thresholds, counts = prior_thresholds(scores, known,
                                              positives_per_image, classes)
    elif method == 'topk':
        topk = max(1, int(round(positives_per_image)))
        return dict(record, topk=topk,
                    positives_per_image=positives_per_image)
    else:
        full = (known != 0).all(1)
        if not full.any():
            raise ValueError(
                '--method f1 needs fully labelled validation images, and '
                'every one has unknown labels: set '
                'val_dataloader.dataset.val_full_subset (see the user guide '
                '"Validating without full labels")')
        thresholds, counts = f1_optimal_thresholds(scores[full],
                                                   known[full] == 1)
        record.update(calibration_images=int(full.sum()))
    if positives_per_image is not None and method == 'prior':
        record.update(positives_per_image=positives_per_image)
    return dict(record,
                thresholds=[float(t) for t in thresholds],
                positives=[int(n) for n in counts])


def save_thresholds(path: str, record: dict) -> None:
    """Write a thresholds file (to a temporary file, then renamed)."""
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    with open(path + '.tmp', 'w') as f:
        json.dump(dict(format=FORMAT, **record), f, indent=1)
    os.replace(path + '.tmp', path)


def load_thresholds(path: str) -> dict:
    """Read and check a thresholds file; any problem names the file."""
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError) as err:
        raise ValueError(f'{path}: not a readable thresholds file ({err}); '
                         'write one with tools/calibrate.py') from None
    if not isinstance(record, dict) or record.get('format') != FORMAT:
        raise ValueError(f'{path} is not a thresholds file of '
                         f'tools/calibrate.py (no "format": "{FORMAT}")')
    classes = record.get('classes')
    if not isinstance(classes, list) or not classes:
        raise ValueError(f'{path}: "classes" must list the class names')
    if 'topk' in record:
        topk = record['topk']
        if not isinstance(topk, int) or not 1 <= topk <= len(classes):
            raise ValueError(f'{path}: "topk" must be an integer in [1, '
                             f'{len(classes)}], got {topk!r}')
        return record
    values = record.get('thresholds')
    if not isinstance(values, list) or len(values) != len(classes):
        raise ValueError(f'{path}: "thresholds" must hold one number per '
                         f'class ({len(classes)})')
    bad = [(c, t) for c, t in zip(classes, values)
           if not isinstance(t, (int, float)) or math.isnan(t)
           or not 0 <= t <= 1]
    if bad:
        raise ValueError(f'{path}: thresholds must be numbers in [0, 1]; '
                         f'{len(bad)} are not: ' +
                         ', '.join(f'{c!r}: {t!r}' for c, t in bad[:10]))
    return record


def check_fits(record: dict, path: str, classes: Sequence[str],
               model: str) -> None:
    """Refuse a thresholds file calibrated for other classes, naming the
    file and the model."""
    theirs = record['classes']
    if list(theirs) == list(classes):
        return
    if len(theirs) != len(classes):
        what = f'{len(theirs)} classes, the model {len(classes)}'
    else:
        diff = [f'{k}: {a!r} / {b!r}'
                for k, (a, b) in enumerate(zip(theirs, classes)) if a != b]
        what = 'other classes (' + '; '.join(diff[:5]) + ')'
    raise ValueError(
        f'{path} was calibrated for another model than {model}: the file '
        f'has {what}; calibrate this model with tools/calibrate.py')


def head_options(record: dict) -> dict:
    """The ``model.head`` options that make the head decide as the file
    says."""
    if 'topk' in record:
        return dict(thr=None, topk=record['topk'])
    return dict(thresholds=record['thresholds'], thr=0.5, topk=None)


def describe(record: dict, path: str) -> str:
    """One line on a thresholds file, for the tools' logs."""
    how = record['method']
    if 'alpha' in record:
        how += f', alpha {record["alpha"]:g}'
    if 'topk' in record:
        how += f', k = {record["topk"]}'
    return f'{path} ({how}, on {record["calibration_images"]} images)'


def apply_thresholds(cfg: Config, path: str, classes: Sequence[str],
                     model: str) -> dict:
    """Check a thresholds file against the model's classes and set the
    config's head to decide by it; returns the file's content."""
    record = load_thresholds(path)
    check_fits(record, path, classes, model)
    options = head_options(record)
    head = MODELS.get(cfg.model.head.type)
    if 'thresholds' in options and not (
            isinstance(head, type) and issubclass(head, SPMLLinearClsHead)):
        raise ValueError(
            f'{path} holds per-class thresholds, which need '
            f'model.head.type=SPMLLinearClsHead (the config has '
            f'{cfg.model.head.type!r}); calibrate with --method topk, or '
            'use SPMLLinearClsHead')
    cfg.model.head.pop('thresholds', None)
    cfg.model.head.update(options)
    return record
