import logging
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
from mmengine.evaluator import BaseMetric
from mmengine.logging import print_log
from mmpretrain.registry import METRICS

from spml_mm.utils.average_precision import average_precision_per_class

#: Class names a warning lists before it only counts the rest.
NAMES_SHOWN = 10


def mean_average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """mAP in percent: the mean of :func:`average_precision_per_class` over
    the classes with a positive.

    Raises:
        ValueError: No class has a positive.
    """
    ap = average_precision_per_class(scores, labels)
    if np.isnan(ap).all():
        raise ValueError(f'no positive label among the {len(ap)} classes of '
                         f'{len(labels)} samples: their mAP is undefined')
    return float(np.nanmean(ap))


def _names(classes: Sequence[str], mask: np.ndarray) -> str:
    """The classes of ``mask``, the first :data:`NAMES_SHOWN` by name."""
    names = [str(classes[k]) for k in np.flatnonzero(mask)]
    more = len(names) - NAMES_SHOWN
    return ', '.join(names[:NAMES_SHOWN]) + (f' and {more} more'
                                             if more > 0 else '')


def annotated_average_precision_per_class(
        scores: np.ndarray, known: np.ndarray) -> Tuple[np.ndarray, dict]:
    """Average precision of each class over its annotated entries only, in
    percent.

    The unknown entries (0 in ``known``) are left out of each class's
    ranking. A class without an annotated positive has no AP, nor has one
    without an annotated negative (its AP would be 100 whatever the scores):
    both are NaN and counted.

    Args:
        scores (np.ndarray): Predicted scores, shape (N, C).
        known (np.ndarray): Labels (N, C): +1 known positive, -1 known
            negative, 0 unknown.

    Returns:
        tuple[np.ndarray, dict]: AP per class (C,), in percent, NaN where
        left out; and the number of classes left out, ``'no positive'`` and
        ``'no negative'`` (a class with neither counts as no positive).
    """
    # imported where it ranks, as in average_precision_per_class
    from sklearn.metrics import average_precision_score
    scores, known = np.asarray(scores), np.asarray(known)
    if scores.shape != known.shape or scores.ndim != 2:
        raise ValueError(f'scores and labels must both be (N, C), got '
                         f'{scores.shape} and {known.shape}')
    positive = (known == 1).any(0)
    negative = (known == -1).any(0)
    ap = np.full(known.shape[1], np.nan)
    for k in np.flatnonzero(positive & negative):
        rows = known[:, k] != 0
        ap[k] = 100 * average_precision_score(known[rows, k] == 1,
                                              scores[rows, k])
    return ap, {'no positive': int((~positive).sum()),
                'no negative': int((positive & ~negative).sum())}


def selection_score(metrics: dict, key: str, who: str) -> float:
    """The validation score ``key`` that a hook selects on.

    Args:
        metrics (dict): The validation metrics.
        key (str): The metric's name, e.g. ``'spml/mAP_observed'``.
        who (str): The hook and its argument, for the message, e.g.
            ``'SPMLEarlyStoppingHook monitors'``.

    Raises:
        KeyError: ``key`` is not among ``metrics``; the message lists them
            and says when ``SPMLAveragePrecision`` leaves a key out.
    """
    if key not in metrics:
        raise KeyError(
            f'{who} {key!r}, which the validation metrics {sorted(metrics)} '
            'lack. SPMLAveragePrecision reports spml/mAP only on fully '
            'labelled images and spml/mAP_annotated only for classes with '
            'annotated positives and negatives; on single-positive '
            'validation labels select on spml/mAP_observed '
            '(docs/methods/protocol.md, Evaluation without full labels).')
    return float(metrics[key])


class KnownLabelMetric(BaseMetric):
    """Base of the metrics that read each sample's labels as known
    positives, known negatives and unknowns (:meth:`known_labels`) and may
    report each class (``per_class``).

    Args:
        per_class (bool): Also report each class's values. Defaults to
            False.
        collect_device (str): Device for gathering results across ranks.
            Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'spml'``.
    """

    default_prefix: Optional[str] = 'spml'

    def __init__(self,
                 per_class: bool = False,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.per_class = per_class

    @staticmethod
    def known_labels(sample: dict, num_classes: int) -> np.ndarray:
        """A sample's labels as one row: +1 known positive, -1 known
        negative, 0 unknown (int8, ``num_classes`` entries)."""
        def indices(labels):
            return torch.as_tensor(labels, dtype=torch.long).cpu().numpy()

        known = np.full(num_classes, -1, dtype=np.int8)
        if 'gt_label_neg' in sample:
            known[:] = 0
            known[indices(sample['gt_label_neg'])] = -1
        known[indices(sample['gt_label'])] = 1
        return known

    def class_names(self, num_classes: int) -> List[str]:
        """The dataset's class names, else the column indices."""
        return (self.dataset_meta or {}).get(
            'classes', [str(k) for k in range(num_classes)])


@METRICS.register_module()
class SPMLAveragePrecision(KnownLabelMetric):
    """Mean average precision of SPML evaluation, in percent, on full and on
    partly unknown labels.

    Defined in docs/methods/protocol.md, "The protocol" and "Evaluation
    without full labels".

    Reads ``pred_score`` (the raw sigmoid scores), the
    positives ``gt_label`` and, on a sample whose
    labels are partly unknown, its known negatives ``gt_label_neg`` (every
    class in neither list unknown; a sample without ``gt_label_neg`` is
    fully labelled, every class not in ``gt_label`` a negative). Reports,
    from one pass:

    - ``spml/mAP``: against the full labels, over the fully labelled samples
      (those without ``gt_label_neg``, or whose two lists cover every
      class). Left out when no sample is fully labelled;
    - ``spml/mAP_observed``: against the known positives, every other entry
      a negative (the community code's observed-label mAP), over every
      sample;
    - ``spml/mAP_annotated``: over the annotated entries only, each class on
      the samples where it is known (:func:`annotated_average_precision_per
      _class`). Left out when no class has an annotated positive and an
      annotated negative.

    Each mean is over the classes that have an AP: a class without a
    positive (for ``mAP_annotated``: without an annotated positive or
    without an annotated negative) is left out, and a warning names it and
    the number of classes the mean is over. On the benchmarks every class
    has a positive in every evaluation split, and the means are those of
    all classes. A split where no class has a positive (for
    ``mAP_observed``: an observed one) is refused with a ValueError rather
    than scored.

    On fully labelled data the three agree, except that ``mAP_annotated``
    also leaves out a class without a negative. Where no sample is fully
    labelled (partial-label test data, validation on observed labels)
    ``mAP_annotated`` comes first and the log line says it is the one to
    read. Each is a key for ``save_best`` and ``SPMLEarlyStoppingHook``;
    the first one reported is the key of ``save_best='auto'`` and
    ``SPMLEarlyStoppingHook(monitor='auto')``.

    Args:
        per_class (bool): Also report each class's AP, as ``spml/AP_<class>``,
            ``spml/AP_observed_<class>`` and ``spml/AP_annotated_<class>``
            (the classes left out omitted). Defaults to False.
        collect_device (str): Device for gathering results across ranks.
            Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'spml'``.

    Example:
        >>> val_evaluator = dict(type='SPMLAveragePrecision')
        >>> default_hooks = dict(checkpoint=dict(
        ...     type='CheckpointHook', save_best='spml/mAP', rule='greater'))
        >>> # validation on observed labels: select on what they give
        >>> default_hooks = dict(checkpoint=dict(
        ...     type='CheckpointHook', save_best='spml/mAP_observed',
        ...     rule='greater'))
    """

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            # the head's raw scores where it calibrates them: the same
            # ranking, without the calibration's float32 saturation
            score = sample['pred_score']
            score = score.float().cpu().numpy()
            self.results.append((score,
                                 self.known_labels(sample, len(score))))

    def dry_run(self, dataset) -> Optional[dict]:
        """What :meth:`evaluate` will report on the whole of ``dataset``,
        from its labels alone (no image is read, no model runs): the keys,
        in their order (their values are those of zero scores, meaningless),
        the warnings about classes left out, and the refusal of a split
        without a positive. The pre-flight (``SPMLPreflightHook``) reads it
        before training.

        Args:
            dataset: The evaluation dataset, whose ``get_data_info`` gives
                each sample's ``gt_label`` (and ``gt_label_neg``).

        Returns:
            dict | None: The metrics with their prefixed keys; None when the
            dataset names no ``classes``.
        """
        classes = (dataset.metainfo or {}).get('classes')
        if not classes:
            return None
        zeros = np.zeros(len(classes), dtype=np.float32)
        metrics = self.compute_metrics([
            (zeros, self.known_labels(dataset.get_data_info(i), len(zeros)))
            for i in range(len(dataset))
        ])
        return {f'{self.prefix}/{k}' if self.prefix else k: v
                for k, v in metrics.items()}

    def compute_metrics(self, results: List) -> dict:
        scores = np.stack([r[0] for r in results])
        known = np.stack([r[1] for r in results])
        full = (known != 0).all(1)
        annotated, left_out = annotated_average_precision_per_class(
            scores, known)
        values = {'': None, '_annotated': None,
                  '_observed': average_precision_per_class(
                      scores, known == 1)}
        if full.any():
            values[''] = average_precision_per_class(scores[full],
                                                     known[full] == 1)
        if not np.isnan(annotated).all():
            values['_annotated'] = annotated
        classes = self.class_names(known.shape[1])
        self._check_positives(values, known, full, classes)
        metrics = {}
        for suffix, ap in values.items():
            if ap is None:
                continue
            metrics[f'mAP{suffix}'] = float(np.nanmean(ap))
            if self.per_class:
                metrics.update({f'AP{suffix}_{c}': float(v)
                                for c, v in zip(classes, ap)
                                if not np.isnan(v)})
        if not full.all() or sum(left_out.values()):
            self._log_unknowns(known, full, left_out, values)
        return metrics

    def _check_positives(self, values: dict, known: np.ndarray,
                         full: np.ndarray, classes: Sequence[str]) -> None:
        """Refuse a mAP without any class that has an AP; warn, naming
        them, about the classes each mAP leaves out."""
        key = f'{self.prefix}/mAP'
        split = (self.dataset_meta or {}).get('split')
        where = f'the {split} split' if split else 'the evaluation split'
        num_classes = known.shape[1]
        counted = {
            '': f'a positive among the {int(full.sum())} fully labelled '
                'images',
            '_observed': f'an observed positive among the {len(known)} '
                         'images'
        }
        parts = []
        for suffix, among in counted.items():
            ap = values[suffix]
            if ap is None:
                continue
            missing = np.isnan(ap)
            if missing.all():
                raise ValueError(
                    f'{key}{suffix}: no class has {among} of {where}, so '
                    'there is no mAP to report (it would read 0 and could '
                    'be saved as the best). Likely causes: label rows that '
                    'are all 0 (a label file saved empty, or read from the '
                    'wrong file or columns), or val_full_subset naming only '
                    'images without a positive; python tools/check_dataset.py'
                    ' CONFIG lists the rows of each split.')
            if suffix == '_observed' and full.all():
                continue  # the same labels as spml/mAP's, said there
            if missing.any():
                same = (f' and {key}_observed' if full.all() and suffix == ''
                        else '')
                parts.append(
                    f'{key}{suffix}{same} over {int((~missing).sum())} of '
                    f'{num_classes} classes: {int(missing.sum())} without '
                    f'{among} of {where} ({_names(classes, missing)})')
        ap = values['_annotated']
        if ap is not None and np.isnan(ap).any():
            positive = (known == 1).any(0)
            reasons = [(~positive, 'an annotated positive'),
                       (positive & ~(known == -1).any(0),
                        'an annotated negative')]
            parts.append(
                f'{key}_annotated over {int((~np.isnan(ap)).sum())} of '
                f'{num_classes} classes: ' + ', '.join(
                    f'{int(mask.sum())} without {what} '
                    f'({_names(classes, mask)})'
                    for mask, what in reasons if mask.any()))
        if parts:
            print_log(
                f'{type(self).__name__}: classes without an AP are left out '
                f'of the means: {"; ".join(parts)}.',
                logger='current', level=logging.WARNING)

    def _log_unknowns(self, known: np.ndarray, full: np.ndarray,
                      left_out: dict, values: dict) -> None:
        """Say what the unknown labels leave out, and which mAP to read."""
        key = f'{self.prefix}/mAP'
        shown = ', '.join(f'{v} without an annotated {k[3:]}'
                          for k, v in left_out.items() if v)
        num, num_full = len(known), int(full.sum())
        parts = []
        if num_full < num:
            parts.append(f'{num - num_full} of {num} images with partly '
                         f'unknown labels ({num_full} fully labelled)')
        if values['_annotated'] is None:
            parts.append(f'{key}_annotated not reported: every class lacks '
                         f'annotated positives or negatives ({shown})')
        else:
            parts.append(f'{key}_annotated over annotated entries only '
                         '(unknown ones masked)' +
                         (f', {sum(left_out.values())} of {known.shape[1]} '
                          f'classes left out ({shown})' if shown else ''))
        if num_full < num:
            parts.append(f'{key}_observed counts unknown entries as '
                         'negatives')
            parts.append(f'{key} over the {num_full} fully labelled images'
                         if num_full else
                         f'{key} (full labels) not reported, read '
                         f'{key}_annotated' if values['_annotated'] is not None
                         else f'{key} (full labels) not reported, read '
                         f'{key}_observed')
        print_log(f'{type(self).__name__}: {"; ".join(parts)}.',
                  logger='current')
