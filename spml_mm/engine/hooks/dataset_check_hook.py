import logging
from typing import List, Optional

from mmengine.dataset import BaseDataset
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmpretrain.registry import HOOKS

from spml_mm.datasets.validation import (DatasetError,
                                         classes_without_positive,
                                         duplicate_findings,
                                         expected_positives_problem,
                                         image_problems, index_label_problems,
                                         shared_image_findings)
from spml_mm.models.heads import SPMLLinearClsHead
from .base import unwrapped_model

CHECK_IMAGES = ('none', 'exists', 'decode')


def _warn(lines: List[Optional[str]]) -> None:
    for line in filter(None, lines):
        print_log(line, logger='current', level=logging.WARNING)


@HOOKS.register_module()
class SPMLDatasetCheckHook(Hook):
    """Fail before the first iteration when the data cannot serve the run.

    Compares the head's ``num_classes`` with the classes of every dataset the
    run uses, so a mismatch names both numbers instead of surfacing later as
    an indexing error, and with the loss's expected number of positives per
    image (EPR's and ROLE's ``expected_positives``), which cannot exceed it;
    checks the label indices of every training sample as
    :class:`SPMLLinearClsHead` reads them (in ``[0, num_classes)``, a
    positive per sample, no class both positive and negative: the head
    builds its targets on the device and does not check them); refuses an
    image listed twice with different labels and a training image that is
    also a validation image; warns of an image listed twice with the same
    labels and names the classes without a positive in the training split;
    then checks every image file of those datasets and reports every
    missing, unreadable or empty one (and, with ``check_images='decode'``,
    every one that does not decode) with its sample index and path, instead
    of failing mid-epoch.

    Args:
        check_images (str): ``'exists'`` (a ``stat`` per image, the
            default), ``'decode'`` (decode every image: slow on large
            datasets) or ``'none'``.

    Example:
        >>> custom_hooks = [dict(type='SPMLDatasetCheckHook',
        ...                      check_images='decode')]
    """

    priority = 'VERY_HIGH'

    def __init__(self, check_images: str = 'exists'):
        if check_images not in CHECK_IMAGES:
            raise ValueError(f'check_images must be one of {CHECK_IMAGES}, '
                             f'got {check_images!r}')
        self.check_images = check_images

    def _check(self, runner, loader_name: str) -> Optional[List[dict]]:
        """Check one dataset; its data infos (None when it is no
        ``BaseDataset``)."""
        model = unwrapped_model(runner)
        head = getattr(model, 'head', None)
        num_classes = getattr(head, 'num_classes', None)
        loader = getattr(runner, loader_name)
        dataset = getattr(loader, 'dataset', None)
        split = loader_name.replace('_dataloader', '')
        classes = (getattr(dataset, 'metainfo', None) or {}).get('classes')
        k = getattr(getattr(head, 'loss_module', None), 'expected_positives',
                    None)
        problem = expected_positives_problem(k, num_classes)
        if problem:
            raise ValueError(problem)
        if num_classes is not None and classes is not None and len(
                classes) != num_classes:
            raise ValueError(
                f'model.head.num_classes={num_classes} but the {split} '
                f'dataset ({type(dataset).__name__}) has {len(classes)} '
                f'classes; set model.head.num_classes={len(classes)} in the '
                'config.')
        if not isinstance(dataset, BaseDataset):
            return None
        infos = [dataset.get_data_info(k) for k in range(len(dataset))]
        where = f'{split} dataset ({type(dataset).__name__})'
        problems, warnings = duplicate_findings(where, infos)
        if (split == 'train' and isinstance(head, SPMLLinearClsHead)
                and all('gt_label' in info for info in infos)):
            problems += index_label_problems(where, infos, num_classes)
            if classes is not None:
                warnings.append(
                    classes_without_positive(where, infos, classes))
        paths = [info.get('img_path') for info in infos]
        if self.check_images != 'none' and None not in paths:
            problems += image_problems(where, paths,
                                       self.check_images == 'decode')
        _warn(warnings)
        if problems:
            raise DatasetError(f'the {where}', problems)
        return infos

    def before_train(self, runner) -> None:
        splits = dict(train=self._check(runner, 'train_dataloader'))
        if runner.val_loop is not None:
            splits['val'] = self._check(runner, 'val_dataloader')
        if None in splits.values() or len(splits) < 2:
            return
        problems, warnings = shared_image_findings(splits)
        _warn(warnings)
        if problems:
            raise DatasetError('the train and val datasets', problems)

    def before_test(self, runner) -> None:
        self._check(runner, 'test_dataloader')
