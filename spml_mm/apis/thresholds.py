"""Calibrated label-set decisions, kept in the checkpoint they decide for.

A decision record holds, for one model, either one threshold per class
(``thresholds``) or a number of labels per image (``topk``), the class
names they were calibrated for and how. ``tools/calibrate.py`` writes it
into the checkpoint's ``meta`` (:data:`META_KEY`, beside MMPretrain's
``dataset_meta``; :func:`record_in_checkpoint`), so that a checkpoint copied
alone decides as calibrated, and ``--out`` writes it as a thresholds file
(json) too. :func:`resolve_decision` is the one place every reader
(``tools/predict.py``, ``tools/test.py``, ``tools/export_onnx.py``,
:class:`~spml_mm.apis.SPMLInferencer`, the TorchServe handler) finds it:
an explicit file, else the checkpoint's record, else a file beside the
checkpoint (:func:`default_thresholds_path`, as calibrate.py wrote before),
else the head's ``thr``; :func:`~spml_mm.models.heads.apply_decision`
applies it.

A decision fits one model only: the file records what it was calibrated
for (:func:`model_identity`: the class names, a digest of the checkpoint's
weights and one of the config's model), and :func:`resolve_decision`, which
every reader goes through, refuses it for any other model unless asked
(``allow_other``), and then says so.
"""
import hashlib
import json
import math
import os.path as osp
from typing import List, Optional, Sequence, Union

import numpy as np
from mmengine.config import Config
from mmpretrain.registry import MODELS

from spml_mm.evaluation.calibration import (CalibrationError,
                                            conformal_thresholds,
                                            estimate_positives_per_image,
                                            f1_optimal_thresholds,
                                            global_conformal_threshold,
                                            prior_thresholds)
from spml_mm.models.heads import SPMLLinearClsHead
from spml_mm.utils import load_checkpoint_safely, write_atomically

#: The calibrations of :func:`calibrate`.
METHODS = ('conformal', 'global', 'prior', 'topk', 'f1')
#: The ``format`` every thresholds file carries.
FORMAT = 'spml-mm thresholds 1'
#: The key of the decision record in a checkpoint's ``meta``.
META_KEY = 'spml_decision'


#: The ``model.head`` keys a decision sets.
DECISION_KEYS = ('thr', 'topk', 'thresholds')
#: How a reader is told to apply a decision of another model anyway.
ALLOW_OTHER = '--allow-other-thresholds'
#: The help of the readers' ``--thresholds``.
THRESHOLDS_HELP = ('thresholds file of tools/calibrate.py (--out), or "none" '
                   '(default: the decision recorded in the checkpoint, else '
                   'the file beside it, else the head\'s thr)')


def weights_digest(checkpoint: dict) -> str:
    """A digest (sha256, 16 hex digits) of a checkpoint's weights: every
    entry of its state dict, by name, dtype, shape and value (a
    ``module.`` prefix ignored). The same weights give the same digest
    whatever else the file holds (its meta, the optimizer state)."""
    import torch
    state = checkpoint.get('state_dict', checkpoint)
    digest = hashlib.sha256()
    for key in sorted(state):
        value = state[key]
        if not isinstance(value, torch.Tensor):
            continue
        name = key[len('module.'):] if key.startswith('module.') else key
        value = value.detach().cpu().contiguous()
        digest.update(f'{name}:{value.dtype}:{tuple(value.shape)};'.encode())
        digest.update(value.reshape(-1).view(torch.uint8).numpy().tobytes()
                      if value.numel() else b'')
    return digest.hexdigest()[:16]


def model_digest(cfg: Config) -> str:
    """A digest (sha256, 16 hex digits) of what turns an image into scores
    besides the weights: the config's backbone, neck and data preprocessor
    (their ``init_cfg`` left out)."""

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k != 'init_cfg'}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    model = cfg.model
    parts = dict(backbone=model.get('backbone'), neck=model.get('neck'),
                 data_preprocessor=model.get('data_preprocessor') or
                 cfg.get('data_preprocessor'))
    text = json.dumps(plain(parts), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def model_identity(cfg: Config, checkpoint: Union[str, dict]) -> dict:
    """What a decision is calibrated for: ``classes`` (the checkpoint's,
    else the head's count), ``weights_sha256`` (:func:`weights_digest`) and
    ``model_sha256`` (:func:`model_digest`)."""
    from .model import checkpoint_classes
    if isinstance(checkpoint, str):
        checkpoint = load_checkpoint_safely(checkpoint, map_location='cpu')
    return dict(classes=checkpoint_classes(checkpoint,
                                           cfg.model.head.num_classes),
                weights_sha256=weights_digest(checkpoint),
                model_sha256=model_digest(cfg))


def default_thresholds_path(checkpoint: str) -> str:
    """``<checkpoint without .pth>_thresholds.json``."""
    return osp.splitext(checkpoint)[0] + '_thresholds.json'


def decision_file(checkpoint: str, thresholds: Optional[str]) -> Optional[str]:
    """The thresholds file a reader of ``checkpoint`` may decide by
    (``--thresholds``: a file, ``'auto'`` or ``'none'``), to keep it from
    being written over: the file given, else the one beside the checkpoint
    that :func:`resolve_decision` would fall back to."""
    if thresholds == 'none' or thresholds is None:
        return None
    return default_thresholds_path(checkpoint) if thresholds == 'auto' \
        else thresholds


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
            per image, which ``'prior'`` and ``'topk'`` need; without it they
            estimate each class's prior from the scores and observed
            positives, and m as their sum
            (``spml_mm.evaluation.estimate_positives_per_image``), record
            both (``estimated_positives_per_image``, ``estimated_priors``),
            and ``'prior'`` predicts each class on its estimated prior.

    Returns:
        dict: The thresholds file's content (without ``format``).
    """
    if method not in METHODS:
        raise ValueError(f'method must be one of {METHODS}, got {method!r}')
    estimated = {}
    if method in ('prior', 'topk') and positives_per_image is None:
        # m is not known from single positives: estimated from the scores
        m, priors = estimate_positives_per_image(scores, known, classes)
        estimated = dict(estimated_positives_per_image=m,
                         estimated_priors=[float(p) for p in priors])
        positives_per_image = m
    if positives_per_image is not None and not (
            1 <= positives_per_image <= len(classes)):
        raise ValueError(
            f'--positives-per-image {positives_per_image:g}: the mean number '
            f'of labels per image must be in [1, {len(classes)}] (the '
            f'number of classes); an image cannot carry more labels than '
            'there are classes')
    record = dict(method=method, classes=list(classes),
                  calibration_images=len(scores), **estimated)
    if method in ('conformal', 'global'):
        fn = conformal_thresholds if method == 'conformal' else \
            global_conformal_threshold
        args = (classes, ) if method == 'conformal' else ()
        thresholds, counts = fn(scores, known, alpha, *args)
        record.update(alpha=alpha)
    elif method == 'prior':
        # with the priors estimated, each class on its own estimate (the
        # share of its observed positives differs between classes)
        thresholds, counts = prior_thresholds(
            scores, known, positives_per_image, classes,
            estimated.get('estimated_priors'))
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
        positives = (known[full] == 1).sum(0)
        empty = [f'{classes[k]!r}' for k in np.flatnonzero(positives == 0)]
        if empty:
            raise CalibrationError(
                f'--method f1: {len(empty)} of {len(classes)} classes have '
                f'no positive among the {int(full.sum())} fully labelled '
                f'validation images, so no threshold can be chosen for '
                f'them: {", ".join(empty[:20])}. Label more validation '
                'images fully, or use --method prior or conformal')
        thresholds, counts = f1_optimal_thresholds(scores[full],
                                                   known[full] == 1)
        record.update(calibration_images=int(full.sum()))
    if positives_per_image is not None and method == 'prior':
        record.update(positives_per_image=positives_per_image)
    return dict(record,
                thresholds=[float(t) for t in thresholds],
                positives=[int(n) for n in counts])


def save_thresholds(path: str, record: dict) -> None:
    """Write a thresholds file atomically (a reader sees the old file or
    the new one, whole)."""
    write_atomically(json.dumps(dict(format=FORMAT, **record), indent=1),
                     path)


def load_thresholds(path: str) -> dict:
    """Read and check a thresholds file; any problem names the file."""
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError) as err:
        raise ValueError(f'{path}: not a readable thresholds file ({err}); '
                         'write one with tools/calibrate.py') from None
    return check_record(record, path)


def check_record(record, path: str) -> dict:
    """Check a decision record (of a file or a checkpoint's meta, named
    ``path`` in the messages) and return it."""
    if not isinstance(record, dict) or record.get('format') != FORMAT:
        raise ValueError(f'{path} is not a thresholds file of '
                         f'tools/calibrate.py (no "format": "{FORMAT}")')
    classes = record.get('classes')
    if not isinstance(classes, list) or not classes:
        raise ValueError(f'{path}: "classes" must list the class names')
    if 'topk' in record:
        topk = record['topk']
        if not isinstance(topk, int) or isinstance(topk, bool) or \
                not 1 <= topk <= len(classes):
            raise ValueError(f'{path}: "topk" must be an integer in [1, '
                             f'{len(classes)}], got {topk!r}')
        return record
    values = record.get('thresholds')
    if not isinstance(values, list) or len(values) != len(classes):
        raise ValueError(f'{path}: "thresholds" must hold one number per '
                         f'class ({len(classes)})')
    bad = [(c, t) for c, t in zip(classes, values)
           if not isinstance(t, (int, float)) or isinstance(t, bool)
           or math.isnan(t)
           or not 0 <= t <= 1]
    if bad:
        raise ValueError(f'{path}: thresholds must be numbers in [0, 1]; '
                         f'{len(bad)} are not: ' +
                         ', '.join(f'{c!r}: {t!r}' for c, t in bad[:10]))
    return record


def checkpoint_record(checkpoint: dict) -> Optional[dict]:
    """The decision record in a checkpoint's meta, or None."""
    return (checkpoint.get('meta') or {}).get(META_KEY)


def record_in_checkpoint(path: str, record: dict,
                         weights_sha256: str) -> None:
    """Write ``record`` into the checkpoint ``path``'s meta
    (:data:`META_KEY`), atomically: its weights and every other key are
    kept as they are, and a reader sees the old file or the new one, whole.
    The record holds plain types only, so the checkpoint still loads with
    ``weights_only=True``.

    Refuses (``ValueError``) a checkpoint whose weights are no longer
    ``weights_sha256`` (replaced while it was calibrated).
    """
    import io

    import torch
    checkpoint = load_checkpoint_safely(path, map_location='cpu')
    found = weights_digest(checkpoint)
    if found != weights_sha256:
        raise ValueError(
            f'{path} changed while it was calibrated (its weights are now '
            f'{found}, calibrated on {weights_sha256}); nothing written: '
            'calibrate it again')
    # plain types only (json's), as weights_only loading allows
    plain = json.loads(json.dumps(dict(format=FORMAT, **record)))
    meta = checkpoint.get('meta')
    checkpoint['meta'] = dict(meta or {}, **{META_KEY: plain})
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    # a link is followed: the file it names is the checkpoint
    write_atomically(buffer.getvalue(), osp.realpath(path))


def decision_differences(record: dict, identity: dict) -> List[str]:
    """How the model a decision was calibrated for differs from the one of
    ``identity`` (:func:`model_identity`) besides the classes, one line
    each; empty when it fits."""
    fits = record.get('fits') or {}
    if not fits:
        return ['it records no digest of the checkpoint it was calibrated '
                'for (written before spml-mm recorded one), so nothing '
                'shows it fits this model']
    found = []
    if fits.get('weights_sha256') != identity['weights_sha256']:
        found.append(
            f'weights: calibrated on {record.get("checkpoint", "?")} '
            f'(weights {fits.get("weights_sha256")}), this checkpoint\'s '
            f'weights are {identity["weights_sha256"]}')
    if fits.get('model_sha256') != identity['model_sha256']:
        found.append(
            f'config: calibrated with {record.get("config", "?")}, whose '
            'backbone, neck or data preprocessor differ from this config\'s'
            f' (model {fits.get("model_sha256")}, here '
            f'{identity["model_sha256"]})')
    return found


def check_fits(record: dict,
               path: str,
               identity: Union[dict, Sequence[str]],
               model: str,
               allow_other: bool = False) -> List[str]:
    """Refuse a thresholds file calibrated for another model, naming the
    file, the model and what differs.

    Args:
        record (dict): The file's content (:func:`load_thresholds`).
        path (str): The file, for the messages.
        identity (dict): The model's :func:`model_identity`.
        model (str): The checkpoint, for the messages.
        allow_other (bool): Apply a decision of other weights or another
            config anyway (other classes stay refused).

    Returns:
        list[str]: Warnings to show: what differs, under ``allow_other``.

    Raises:
        ValueError: The file was calibrated for another model.
    """
    classes = identity['classes']
    theirs = record['classes']
    if list(theirs) != list(classes):
        if len(theirs) != len(classes):
            what = f'{len(theirs)} classes, the model {len(classes)}'
        else:
            diff = [f'{k}: {a!r} / {b!r}'
                    for k, (a, b) in enumerate(zip(theirs, classes))
                    if a != b]
            what = 'other classes (' + '; '.join(diff[:5]) + ')'
        raise ValueError(
            f'{path} was calibrated for another model than {model}: the '
            f'file has {what}; calibrate this model with '
            'tools/calibrate.py')
    found = decision_differences(record, identity)
    if not found:
        return []
    if allow_other:
        return [f'WARNING: deciding by {path}, calibrated for another model '
                f'than {model} ({ALLOW_OTHER}): ' + '; '.join(found)]
    raise ValueError(
        f'{path} was calibrated for another model than {model}: ' +
        '; '.join(found) + '. Calibrate this model with python '
        f'tools/calibrate.py CONFIG {model}, decide by the head\'s thr with '
        f'--thresholds none, or pass {ALLOW_OTHER} to decide by this file '
        'anyway')


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


def apply_thresholds(cfg: Config,
                     path: str,
                     identity: dict,
                     model: str,
                     allow_other: bool = False) -> dict:
    """Check a thresholds file against the model (:func:`check_fits`) and
    set the config's head to decide by it; returns the file's content,
    with the warnings of ``allow_other`` under ``'warnings'``."""
    record = load_thresholds(path)
    warnings = check_fits(record, path, identity, model, allow_other)
    set_head(cfg, record, path)
    return dict(record, warnings=warnings)


def set_head(cfg: Config, record: dict, path: str) -> None:
    """Set the config's head to decide by a record (:func:`head_options`);
    per-class thresholds need :class:`SPMLLinearClsHead`."""
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


def decision_options(cfg_options: Optional[dict]) -> List[str]:
    """The ``--cfg-options`` that set the head's decision themselves."""
    return sorted(
        f'{k}={v}' for k, v in (cfg_options or {}).items()
        if k.startswith('model.head.') and k.split('.')[2] in DECISION_KEYS)


def resolve_decision(cfg: Config,
                     checkpoint: Union[str, dict],
                     thresholds: Optional[str] = 'auto',
                     allow_other: bool = False,
                     cfg_options: Optional[dict] = None,
                     identity: Optional[dict] = None,
                     filename: Optional[str] = None) -> dict:
    """The label-set decision a reader of ``checkpoint`` applies, found in
    one place for every reader, and set on the config's head.

    ``thresholds``: a thresholds file; ``'auto'``: the record in the
    checkpoint's meta (:func:`record_in_checkpoint`), else the file beside
    the checkpoint (:func:`default_thresholds_path`, when it exists), else
    the head's own; ``'none'`` or None: the head's own (``thr``/``topk``).

    A record must have been calibrated for this model (:func:`check_fits`:
    its classes and their count, weights and config), else it is refused
    naming both sides, or, with ``allow_other``, applied with a warning
    (other classes stay refused). A decision set by ``--cfg-options``
    (``cfg_options``: ``model.head.thr``, ``topk``, ``thresholds``)
    together with a record is refused, naming both.

    Returns:
        dict: ``source`` (``'file'``, ``'checkpoint'`` or ``'head'``),
        ``path`` (the file, or None), ``record`` (the record, or None),
        ``line`` (what decides, for the tools' ``decision:`` line) and
        ``warnings``.
    """
    name = filename or (checkpoint if isinstance(checkpoint, str) else
                        'the checkpoint')
    path, where, record = thresholds, '--thresholds', None
    if path == 'auto':
        if isinstance(checkpoint, str):
            checkpoint = load_checkpoint_safely(checkpoint,
                                                map_location='cpu')
        record = checkpoint_record(checkpoint)
        if record is not None:
            path, where = f"{name}'s meta", None
            record = check_record(record, f'the decision in {path}')
        else:
            found = default_thresholds_path(name)
            path = found if osp.isfile(found) else None
            where = 'beside the checkpoint'
    elif path == 'none':
        path = None
    if path is None:
        head = cfg.model.head
        return dict(source='head', path=None, record=None, warnings=[],
                    line=f'the head\'s (thr={head.get("thr", 0.5)}, '
                    f'topk={head.get("topk")})')
    source = 'checkpoint' if record is not None else 'file'
    named = f'the decision in {path}' if record is not None else \
        f'the thresholds file {path}'
    given = decision_options(cfg_options)
    if given:
        raise ValueError(
            f'--cfg-options {" ".join(given)} and {named}' +
            (f' ({where})' if where else '') + ' both set the label-set '
            'decision: pass --thresholds none to decide '
            f'by {" ".join(given)}, or leave the option out to decide by '
            f'{"the record" if record is not None else "the file"}')
    if identity is None:
        identity = model_identity(cfg, checkpoint)
    if record is None:
        record = load_thresholds(path)
    else:
        path = f'the decision in {path}'
    warnings = check_fits(record, path, identity, name, allow_other)
    set_head(cfg, record, path)
    line = describe(record, path[len('the decision in '):]) \
        if source == 'checkpoint' else f'thresholds {describe(record, path)}'
    return dict(source=source, path=None if source == 'checkpoint' else
                path, record=dict(record, warnings=warnings),
                warnings=warnings, line=line)
