import random
import time
from typing import List, Optional, Tuple

import numpy as np
import torch
from mmengine.hooks import CheckpointHook, Hook
from mmengine.runner import autocast
from mmpretrain.registry import HOOKS

#: How each kind of selection names its metric: (attribute, config key).
SELECTORS = (('save_best', 'save_best'), ('monitor', 'monitor'))


def _type_name(cfg) -> str:
    kind = cfg.get('type', '')
    name = kind if isinstance(kind, str) else kind.__name__
    return name.split('.')[-1]


def _config_places(cfg) -> dict:
    """Hook type -> where it is configured (``default_hooks.<name>`` or
    ``custom_hooks.<index>``)."""
    places = {}
    for name, hook in (cfg.get('default_hooks') or {}).items():
        if hook:
            places.setdefault(_type_name(hook), []).append(
                f'default_hooks.{name}')
    for i, hook in enumerate(cfg.get('custom_hooks') or []):
        places.setdefault(_type_name(hook), []).append(f'custom_hooks.{i}')
    return places


def monitored_keys(runner) -> List[Tuple[str, str]]:
    """Every validation metric the run selects on, with its config key:
    ``save_best`` of each ``CheckpointHook``, the ``monitor`` of every other
    hook (``SPMLEarlyStoppingHook``, MMEngine's ``EarlyStoppingHook``...)
    and of every parameter scheduler (``ReduceOnPlateauLR``...).

    Returns:
        list[tuple[str, str]]: (config key, metric name) pairs.
    """
    places = _config_places(runner.cfg)
    found = []
    for hook in runner.hooks:
        name = type(hook).__name__
        where = places.get(name, [])
        prefix = where[0] if len(where) == 1 else name
        if isinstance(hook, CheckpointHook):
            found += [(f'{prefix}.save_best', key)
                      for key in hook.save_best or []]
        elif isinstance(getattr(hook, 'monitor', None), str):
            found.append((f'{prefix}.monitor', hook.monitor))
    schedulers = runner.param_schedulers or []
    if isinstance(schedulers, dict):
        schedulers = [s for group in schedulers.values() for s in group]
    for i, scheduler in enumerate(schedulers):
        if isinstance(getattr(scheduler, 'monitor', None), str):
            found.append((f'param_scheduler.{i}.monitor', scheduler.monitor))
    return found


def _validation_labels(cfg) -> str:
    """The validation dataset's label options, for messages."""
    dataset = (cfg.get('val_dataloader') or {}).get('dataset') or {}
    options = [f'val_dataloader.dataset.{k}={dataset[k]!r}'
               for k in ('val_labels', 'val_full_subset')
               if dataset.get(k) is not None]
    return f' with {" and ".join(options)}' if options else ''


@HOOKS.register_module()
class SPMLPreflightHook(Hook):
    """Check the run as a whole before its first training iteration, in
    seconds rather than after an epoch.

    Runs in ``before_train`` (after the weights are loaded or resumed and
    after the dataset checks, before the other hooks' ``before_train``):

    1. **What validation will report.** Every validation metric that can
       (``SPMLAveragePrecision.dry_run``) scores the validation split's
       labels, as the validation will see them (after ``val_labels`` and
       ``val_full_subset``), on zero scores: the keys it will report, its
       warnings about classes without a positive, and its refusal of a
       split without any, with no image read.
    2. **Sanity batches** (as PyTorch Lightning's sanity check):
       ``sanity_batches`` validation batches run through the model
       (``val_step``, eval mode, no gradients, the validation loop's
       ``fp16``) and every metric's ``process``, so a crash there shows
       now; a metric without ``dry_run`` reports its keys from these
       batches. The random state (Python, NumPy, torch, CUDA) is restored
       afterwards, so training is the same with and without them.
    3. **Every selected key is reported.** ``save_best`` of a
       ``CheckpointHook``, the ``monitor`` of ``SPMLEarlyStoppingHook``,
       of MMEngine's ``EarlyStoppingHook``, of any hook or parameter
       scheduler with one: a key the validation will not report is refused,
       naming the config key, the keys validation reports and the value to
       set. ``'auto'`` (the default of ``SPMLCheckpointHook`` in the
       project's runtime and of ``SPMLEarlyStoppingHook``) selects on the
       first key the validation reports, which the log names: on full
       labels ``spml/mAP``, on observed labels ``spml/mAP_observed``
       (``spml/mAP_annotated`` where observed negatives give one).

    Before these, every image cache a loader reads (``LoadCachedImage``)
    is checked against its dataset's image files (a stale cache is refused
    here rather than at the first batch that meets it).

    The checks of the machine (``runner_type`` resolves, the GPU fast
    recipe and mixed precision need CUDA) run earlier, before the runner is
    built (``tools/train.py``, ``SPMLGPUFastRunner``).

    Args:
        sanity_batches (int): Validation batches run through the model and
            the metrics before training; 0 turns them off (the label checks
            stay). Defaults to 2.

    Example:
        >>> default_hooks = dict(
        ...     preflight=dict(type='SPMLPreflightHook', sanity_batches=2))
        >>> # --cfg-options default_hooks.preflight.sanity_batches=0
    """

    # after SPMLDatasetCheckHook ('VERY_HIGH'), before the hooks that select
    # on validation metrics
    priority = 'HIGH'

    def __init__(self, sanity_batches: int = 2):
        if not (isinstance(sanity_batches, int) and sanity_batches >= 0):
            raise ValueError('sanity_batches must be an integer >= 0, got '
                             f'{sanity_batches!r}')
        self.sanity_batches = sanity_batches

    def before_train(self, runner) -> None:
        start = time.perf_counter()
        self._check_image_caches(runner)
        monitored = monitored_keys(runner)
        loop = runner.val_loop
        if loop is None:
            if monitored:
                runner.logger.warning(
                    'SPMLPreflightHook: the run does not validate, so '
                    f'{", ".join(k for k, _ in monitored)} select nothing '
                    '(no best checkpoint, no early stopping).')
            return
        if not (hasattr(loop, 'dataloader') and hasattr(loop, 'evaluator')):
            runner.logger.warning(
                f'SPMLPreflightHook: {type(loop).__name__} has no dataloader '
                'and evaluator to check; the validation is not checked.')
            return
        dataset = loop.dataloader.dataset
        reported: List[Optional[List[str]]] = []
        for metric in loop.evaluator.metrics:
            dry_run = getattr(metric, 'dry_run', None)
            keys = dry_run(dataset) if callable(dry_run) else None
            reported.append(None if keys is None else list(keys))
        if self.sanity_batches:
            for i, keys in enumerate(self._sanity(runner, loop)):
                if reported[i] is None:
                    reported[i] = keys
        self._check_keys(runner, monitored, reported)
        keys = [k for r in reported if r for k in r]
        runner.logger.info(
            f'SPMLPreflightHook: validation{_validation_labels(runner.cfg)} '
            f'will report {keys}'
            + (f', checked on {self.sanity_batches} batches'
               if self.sanity_batches else '')
            + f' ({time.perf_counter() - start:.1f} s).')

    @staticmethod
    def _check_image_caches(runner) -> None:
        """Every image cache a loader reads (``LoadCachedImage``) holds its
        dataset's images as they are now (refused here, naming the
        command that writes it again, rather than at the first batch that
        meets a stale image)."""
        loaders = [runner.train_dataloader]
        loop = runner.val_loop
        if loop is not None and hasattr(loop, 'dataloader'):
            loaders.append(loop.dataloader)
        for loader in loaders:
            dataset = getattr(loader, 'dataset', None)
            while dataset is not None and not hasattr(dataset, 'pipeline') \
                    and hasattr(dataset, 'dataset'):
                dataset = dataset.dataset  # a dataset wrapper
            transforms = getattr(getattr(dataset, 'pipeline', None),
                                 'transforms', [])
            cached = [t for t in transforms if callable(
                getattr(t, 'check', None)) and hasattr(t, 'cache_file')]
            if not cached:
                continue
            paths = [dataset.get_data_info(i)['img_path']
                     for i in range(len(dataset))]
            for transform in cached:
                transform.check(paths)

    def _sanity(self, runner, loop) -> List[Optional[List[str]]]:
        """Run the sanity batches; each metric's keys on them (None for a
        metric with ``dry_run``, whose keys come from the whole split)."""
        model, evaluator = runner.model, loop.evaluator
        training = model.training
        state = (random.getstate(), np.random.get_state(),
                 torch.get_rng_state(),
                 torch.cuda.get_rng_state_all()
                 if torch.cuda.is_available() else None)
        model.eval()
        batch, stage, data = 0, 'load', None
        try:
            with torch.no_grad():
                for batch, data in enumerate(loop.dataloader, 1):
                    stage = 'model'
                    with autocast(enabled=getattr(loop, 'fp16', False)):
                        outputs = model.val_step(data)
                    stage = 'metric'
                    evaluator.process(data_samples=outputs, data_batch=data)
                    if batch == self.sanity_batches:
                        break
                    stage = 'load'
            keys = []
            for metric in evaluator.metrics:
                if callable(getattr(metric, 'dry_run', None)) or \
                        not metric.results:
                    keys.append(None)
                    continue
                values = metric.compute_metrics(metric.results)
                keys.append([f'{metric.prefix}/{k}' if metric.prefix else k
                             for k in values])
            return keys
        except Exception as err:
            if hasattr(err, 'add_note'):  # Python >= 3.11
                err.add_note(self._crash_note(stage, batch, data))
            raise
        finally:
            for metric in evaluator.metrics:
                metric.results.clear()
            model.train(training)
            random.setstate(state[0])
            np.random.set_state(state[1])
            torch.set_rng_state(state[2])
            if state[3] is not None:
                torch.cuda.set_rng_state_all(state[3])

    def _crash_note(self, stage: str, batch: int, data) -> str:
        """Where a sanity batch failed, with the config keys behind it."""
        if stage == 'load':
            where = (f'loading validation batch {batch + 1}: look at '
                     'val_dataloader.dataset (its data_root, ann_file and '
                     'pipeline)')
        else:
            inputs = data.get('inputs') if isinstance(data, dict) else None
            if isinstance(inputs, (list, tuple)) and inputs and \
                    hasattr(inputs[0], 'shape'):
                shape = (f'{len(inputs)} images of shape '
                         f'{tuple(inputs[0].shape)}')
            elif hasattr(inputs, 'shape'):
                shape = f'inputs of shape {tuple(inputs.shape)}'
            else:
                shape = 'its inputs'
            where = (f'in the model on validation batch {batch} ({shape}, '
                     'from val_dataloader.dataset.pipeline): look at model '
                     '(data_preprocessor, backbone, head) and at that '
                     'pipeline' if stage == 'model' else
                     f'in the metrics on validation batch {batch}: look at '
                     'val_evaluator and model.head.num_classes')
        return (f'Raised by SPMLPreflightHook before training, {where}. '
                'default_hooks.preflight.sanity_batches='
                f'{self.sanity_batches}; 0 skips this check, and the error '
                'then comes at the first validation.')

    @staticmethod
    def _check_keys(runner, monitored: List[Tuple[str, str]],
                    reported: List[Optional[List[str]]]) -> None:
        """Refuse a selected key that validation will not report; name what
        ``'auto'`` selects."""
        keys = [k for r in reported if r for k in r]
        unknown = any(r is None for r in reported)
        first = reported[0][0] if reported and reported[0] else None
        for path, key in monitored:
            if key == 'auto':
                runner.logger.info(
                    f"SPMLPreflightHook: {path}='auto' selects on "
                    + (f'{first}, the first key validation reports.'
                       if first else 'the first key validation reports.'))
            elif key in keys:
                continue
            elif unknown:
                runner.logger.warning(
                    f'SPMLPreflightHook: cannot check {path}={key!r}: a '
                    'validation metric gives its keys only once it runs '
                    '(default_hooks.preflight.sanity_batches > 0 shows '
                    'them).')
            else:
                raise ValueError(
                    f'{path}={key!r} names a metric that validation'
                    f'{_validation_labels(runner.cfg)} will not report: it '
                    f'reports {keys}. Set {path}={first!r} (in '
                    f'--cfg-options: {path}={first}), or \'auto\' to '
                    'select on the first key validation reports.')
