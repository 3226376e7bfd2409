import ast
import copy
import glob
import os
import os.path as osp
import pickle
from typing import Dict, Optional

import torch
from mmengine.dist import is_main_process
from mmengine.hooks import CheckpointHook
from mmengine.optim import OptimWrapper
from mmengine.runner import BaseLoop, EpochBasedTrainLoop
from mmengine.utils import apply_to
from mmpretrain.registry import HOOKS

from spml_mm.engine.optimizers.grouped_optim_wrapper_constructor import \
    merge_param_groups
from spml_mm.evaluation import selection_score
from spml_mm.utils import find_last_checkpoint, write_atomically
from spml_mm.utils.atomic_backend import PARTIAL_SUFFIX, is_partial_file
from spml_mm.utils.checkpoint_fit import (SIGNATURE_KEY,
                                          check_checkpoint_fits,
                                          checkpoint_differences,
                                          model_signature)
from .base import unwrapped_model

#: ``meta`` key of the checkpoints written after their epoch's validation
#: (the best one, and the epoch's one saved again with it).
VALIDATED_KEY = 'spml_validated'
#: Message hub key: the names of the best checkpoints that a new best
#: replaces, until they are removed.
REPLACED_BEST_KEY = 'spml_replaced_best'
#: Keys that the plugin's datasets added to their metainfo after checkpoints
#: were written without them (``split``, named by the mAP metric's messages).
ADDED_META_KEYS = {'split'}
#: MMEngine's optimizer wrapper constructor, used when a config names none.
DEFAULT_CONSTRUCTOR = 'DefaultOptimWrapperConstructor'


def _to_cpu(state):
    return apply_to(state, lambda x: hasattr(x, 'cpu'), lambda x: x.cpu())


def _inside(path: str, folder: str) -> bool:
    path, folder = osp.realpath(path), osp.realpath(folder)
    return osp.commonpath([path, folder]) == folder


def recorded_constructor(checkpoint: dict) -> Optional[str]:
    """The optimizer wrapper constructor of the config that a checkpoint
    records (``meta['cfg']``, parsed, not run), or None without one."""
    try:
        tree = ast.parse((checkpoint.get('meta') or {}).get('cfg') or '')
    except SyntaxError:
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and any(getattr(t, 'id', None) == 'optim_wrapper'
                        for t in node.targets)):
            for keyword in node.value.keywords:
                if (keyword.arg == 'constructor'
                        and isinstance(keyword.value, ast.Constant)):
                    return keyword.value.value
            return DEFAULT_CONSTRUCTOR
    return None


@HOOKS.register_module()
class SPMLCheckpointHook(CheckpointHook):
    """MMEngine's ``CheckpointHook`` that never loses the last good checkpoint.

    Differences from :class:`mmengine.hooks.CheckpointHook` (every argument of
    which it takes):

    - Each file is written to ``<name>.<tag>.spml.partial``, fsynced and
      renamed over its name (``spml_atomic_local`` file backend), and only
      then are older checkpoints (``max_keep_ckpts``) and the previous best
      one removed. A kill or an I/O error (``ENOSPC``) at any moment leaves
      the previous checkpoint complete and ``last_checkpoint`` naming it.
    - ``last_checkpoint`` holds the path relative to the work dir, so a
      copied or moved work dir resumes from its own files (absolute paths
      written by MMEngine are read too).
    - Only files inside this run's ``out_dir`` are ever removed: resuming
      from another run's checkpoint (whose message hub names that run's best
      checkpoint) leaves that run untouched. At start-up only its own
      leftover partial files are removed (the tag, a hash of the name, marks
      them: a user's file ending in ``.spml.partial`` is kept).
    - Every checkpoint records in ``meta['spml_model']`` what it fits (a
      hash of the weights' names and shapes, the head's ``num_classes``,
      the method: loss and label bank types, the plugin version). Before
      ``--resume`` or ``tools/test.py`` uses a checkpoint, its weights
      (names, shapes), classes and, when resuming, method are compared with
      the model's; any difference stops the run with a list of what
      differs. ``load_strict=False`` (a top-level config key,
      ``--cfg-options load_strict=False``) loads it anyway with a warning;
      when resuming, the optimizer state of the parameters whose shape
      differs (another number of classes) starts afresh.
      Loading ``load_from`` weights to fine-tune is not checked.
    - The end of an epoch is resumable. An epoch's checkpoint is written
      before its validation and written again after it only with a new best
      (``meta['spml_validated']``), so what a validation without a new best
      changed (early stopping's count, ``SPMLEarlyStoppingHook``) is in no
      checkpoint, nor is anything of a validation cut short by a kill. A run
      resumed from a checkpoint written before its epoch's due validation
      validates that epoch first, also when it was the last one, and goes
      on as the uninterrupted run did.
    - A kill after a new best checkpoint was recorded but before the
      previous best was removed left two best checkpoints; the resumed run
      removes the one its checkpoint records as replaced.
      :func:`spml_mm.utils.find_best_checkpoint` names a run's best
      checkpoint as recorded, whatever else the folder holds.
    - The best checkpoint carries the optimizer and parameter-scheduler
      state, so ``--resume`` from it continues exactly. Resuming from a
      checkpoint without that state stops with a message naming what it
      lacks, unless ``resume_weights_only`` is set.
    - A ``save_best`` metric that validation does not report (``spml/mAP``
      on observed validation labels: select on ``spml/mAP_observed``) stops
      with a message that lists the reported ones; ``SPMLPreflightHook``
      refuses it before training. ``save_best='auto'`` (the project's
      runtime) selects on the first key the validation reports:
      ``spml/mAP`` on full validation labels, ``spml/mAP_observed`` with
      ``val_labels='observed'``.

    Args:
        best_resume_state (bool): Store optimizer and scheduler state in the
            best checkpoint too. Defaults to True.
        resume_weights_only (bool): Resume (epoch, iteration, weights,
            per-sample state, message hub) from a checkpoint without
            optimizer or scheduler state, or ignoring it: the optimizer and
            schedulers start afresh. ``tools/train.py --resume-weights-only
            PATH`` sets it. Defaults to False.
        **kwargs: The arguments of MMEngine's ``CheckpointHook``. Without
            ``backend_args``/``file_client_args`` and with a local
            ``out_dir``, files are written through ``spml_atomic_local``.

    Example:
        >>> default_hooks = dict(checkpoint=dict(
        ...     type='SPMLCheckpointHook', interval=1, max_keep_ckpts=1,
        ...     save_best='spml/mAP', rule='greater'))
    """

    def __init__(self,
                 *args,
                 best_resume_state: bool = True,
                 resume_weights_only: bool = False,
                 **kwargs):
        out_dir = kwargs.get('out_dir')
        if (kwargs.get('backend_args') is None
                and kwargs.get('file_client_args') is None
                and (out_dir is None or '://' not in str(out_dir))):
            kwargs['backend_args'] = dict(backend='spml_atomic_local')
        super().__init__(*args, **kwargs)
        self.best_resume_state = best_resume_state
        self.resume_weights_only = resume_weights_only
        self._saving_best = False
        self._resumed_validated = False

    # ------------------------------------------------------------- resuming
    def before_run(self, runner) -> None:
        # MMEngine reads `last_checkpoint` relative to the current folder;
        # resolve it against the work dir before the runner resumes.
        if runner._resume and runner._load_from is None:
            path = find_last_checkpoint(runner.work_dir)
            if path is not None:
                runner._load_from = path

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        self._check_fit(runner, checkpoint)
        if not runner._resume:
            return
        self._resumed_validated = bool(
            (checkpoint.get('meta') or {}).get(VALIDATED_KEY))
        self._complete_dataset_meta(runner, checkpoint)
        needed = ['optimizer']
        if runner.param_schedulers:
            needed.append('param_schedulers')
        if self.resume_weights_only:
            for key in needed:
                checkpoint.pop(key, None)
            runner.logger.warning(
                f'Resuming weights only from {runner._load_from}: the '
                'optimizer and parameter schedulers start afresh.')
            return
        missing = [k for k in needed if k not in checkpoint]
        if missing:
            raise ValueError(
                f'cannot resume from {runner._load_from}: it has no '
                f'{" and no ".join(missing)} state (it is a weights-only '
                'checkpoint, e.g. a best checkpoint written by MMEngine\'s '
                'CheckpointHook), so resuming would silently restart the '
                'optimizer. Resume from the last checkpoint (--resume with '
                'no path) or, to continue from these weights with a fresh '
                f'optimizer, pass --resume-weights-only {runner._load_from} '
                '(default_hooks.checkpoint.resume_weights_only=True).')
        self._merge_optimizer_groups(runner, checkpoint)
        if not runner.cfg.get('load_strict', True):
            self._fit_optimizer_state(runner, checkpoint)

    @staticmethod
    def _complete_dataset_meta(runner, checkpoint: dict) -> None:
        """Add the metainfo keys the plugin's datasets gained since the
        checkpoint was written (:data:`ADDED_META_KEYS`) when the rest is
        the training set's: MMEngine would warn of another dataset."""
        meta = checkpoint.get('meta') or {}
        saved = meta.get('dataset_meta')
        current = getattr(runner.train_dataloader.dataset, 'metainfo', None)
        if not (isinstance(saved, dict) and isinstance(current, dict)):
            return
        added = set(current) - set(saved)
        if (added and added <= ADDED_META_KEYS
                and set(saved) <= set(current) and all(
                    pickle.dumps(v) == pickle.dumps(current[k])
                    for k, v in saved.items())):
            meta['dataset_meta'] = copy.deepcopy(current)

    def _merge_optimizer_groups(self, runner, checkpoint: dict) -> None:
        """A checkpoint of one optimizer group per parameter (MMEngine's
        constructor with a ``paramwise_cfg``, as the GR and large-loss
        configs had) resumed under ``GroupedOptimWrapperConstructor``: its
        groups are merged as the constructor merges them, so every
        parameter keeps its optimizer state. Other groups than the
        optimizer's stop the run with what differs (unless
        ``load_strict=False``)."""
        saved = checkpoint.get('optimizer')
        wrapper = runner.optim_wrapper
        if not (isinstance(wrapper, OptimWrapper) and isinstance(saved, dict)
                and 'param_groups' in saved):
            return
        sizes = [len(g['params']) for g in wrapper.optimizer.param_groups]
        if [len(g['params']) for g in saved['param_groups']] == sizes:
            return
        merged = merge_param_groups(saved['param_groups'])
        if [len(g['params']) for g in merged] == sizes:
            saved['param_groups'] = merged
            runner.logger.info(
                f'The optimizer state of {runner._load_from} has '
                f'{len(merged)} groups once its groups of equal options are '
                'merged, as GroupedOptimWrapperConstructor builds them.')
        elif runner.cfg.get('load_strict', True):
            ours = (runner.cfg.get('optim_wrapper') or {}).get(
                'constructor', DEFAULT_CONSTRUCTOR)
            theirs = recorded_constructor(checkpoint)
            raise ValueError(
                f'cannot resume the optimizer state of {runner._load_from}: '
                f'it has {len(saved["param_groups"])} parameter groups, '
                f'built by {theirs or "an unrecorded constructor"}, and the '
                f'optimizer of this config has {len(sizes)}, built by '
                f'{ours} (optim_wrapper.constructor). Resume with the '
                "checkpoint's constructor (--cfg-options "
                f'optim_wrapper.constructor={theirs or "NAME"}), or pass '
                f'--resume-weights-only {runner._load_from} to continue '
                'from its weights with a fresh optimizer.')

    def _fit_optimizer_state(self, runner, checkpoint: dict) -> None:
        """Under ``load_strict=False``, restart the optimizer state of the
        parameters whose shape differs from the checkpoint's (another number
        of classes), or all of it when the parameters differ in number:
        PyTorch would load it and fail inside the optimizer's step."""
        saved = checkpoint.get('optimizer')
        wrapper = runner.optim_wrapper
        if not (isinstance(wrapper, OptimWrapper) and isinstance(saved, dict)
                and 'param_groups' in saved):
            return
        groups = wrapper.optimizer.param_groups
        if [len(g['params']) for g in groups] != [
                len(g['params']) for g in saved['param_groups']
        ]:
            del checkpoint['optimizer']
            runner.logger.warning(
                f'load_strict=False: the optimizer state in '
                f'{runner._load_from} is for other parameters than the '
                "model's; the optimizer starts afresh.")
            return
        names = {
            id(p): n
            for n, p in unwrapped_model(runner).named_parameters()
        }
        restarted = []
        for group, saved_group in zip(groups, saved['param_groups']):
            for param, index in zip(group['params'], saved_group['params']):
                state = saved['state'].get(index, {})
                if any(
                        torch.is_tensor(v) and v.dim() > 0
                        and v.shape != param.shape for v in state.values()):
                    del saved['state'][index]
                    restarted.append(names.get(id(param), str(index)))
        if restarted:
            runner.logger.warning(
                f'load_strict=False: the optimizer state of '
                f'{", ".join(restarted)} has other shapes in '
                f'{runner._load_from}; it starts afresh.')

    def _check_fit(self, runner, checkpoint: dict) -> None:
        """Refuse a checkpoint to resume or to test that does not fit."""
        evaluating = not isinstance(runner._train_loop, BaseLoop)
        if not (runner._resume or evaluating):
            return  # load_from: fine-tuning from other weights
        model, name = unwrapped_model(runner), runner._load_from
        if runner.cfg.get('load_strict', True):
            check_checkpoint_fits(checkpoint, model, name, runner._resume)
        else:
            for line in checkpoint_differences(checkpoint, model,
                                               runner._resume):
                runner.logger.warning(
                    f'load_strict=False: {name} differs: {line}')
        recorded = (checkpoint.get('meta') or {}).get(SIGNATURE_KEY) or {}
        method = model_signature(model)['method']
        if evaluating and recorded.get('method') not in (None, method):
            runner.logger.warning(
                f'{name} was trained with {recorded["method"]}, the config '
                f'uses {method}: its weights are scored as they are.')

    def _validation_pending(self, runner) -> bool:
        """The resumed checkpoint was written before its epoch's due
        validation."""
        loop = runner.train_loop
        if not (runner._resume and runner._has_loaded and self.by_epoch
                and isinstance(loop, EpochBasedTrainLoop)
                and runner._val_loop is not None and loop.epoch > 0):
            return False
        due = loop.epoch >= loop.val_begin and (
            loop.epoch % loop.val_interval == 0
            or loop.epoch == loop.max_epochs)
        return due and not self._resumed_validated

    def before_train(self, runner) -> None:
        super().before_train(runner)
        if self._is_local():
            self._own_files(runner)
        if self._validation_pending(runner):
            runner.logger.info(
                f'{runner._load_from} was written before the validation of '
                f'epoch {runner.train_loop.epoch}, whose outcome (a best '
                'checkpoint, early stopping) it does not hold: validating '
                'that epoch now.')
            runner.val_loop.run()

    def _own_files(self, runner) -> None:
        """Track the resumed run's files in this run's folder only; remove
        the plugin's leftover partial files there."""
        # MMEngine forgets the last checkpoint of a resumed run: without it a
        # new best would not be saved into the epoch's checkpoint again
        if (runner._resume and runner._has_loaded and self.last_ckpt is None
                and _inside(runner._load_from, self.out_dir)):
            self.last_ckpt = runner._load_from
        # the message hub of a resumed checkpoint names its own run's best
        # checkpoint: keep tracking it only if it is in this run's folder
        for key, path in self._best_paths().items():
            if path is None or _inside(path, self.out_dir):
                continue
            here = osp.join(self.out_dir, osp.basename(path))
            kept = here if osp.isfile(here) else None
            self._set_best_path(key, kept)
            runner.message_hub.update_info(self._best_info_key(key), kept)
            runner.logger.info(
                f'The best checkpoint {path} of the resumed run is outside '
                f'{self.out_dir}; it is left in place'
                f'{", tracking " + here if kept else ""}.')
        self._finish_best_removal(runner)
        if is_main_process():
            for partial in glob.glob(
                    osp.join(glob.escape(self.out_dir), '*' + PARTIAL_SUFFIX)):
                if not is_partial_file(partial):
                    continue
                runner.logger.info(
                    f'Removing {partial}, left by an interrupted write.')
                os.remove(partial)

    def _finish_best_removal(self, runner) -> None:
        """Remove the best checkpoints that the resumed one records as
        replaced, left by a kill before their removal; only when it is a
        checkpoint of this folder (a run moved with it included)."""
        replaced = runner.message_hub.get_info(REPLACED_BEST_KEY) or []
        runner.message_hub.update_info(REPLACED_BEST_KEY, [])
        if not (replaced and runner._resume and runner._has_loaded
                and _inside(runner._load_from, self.out_dir)
                and is_main_process()):
            return
        kept = {osp.basename(p) for p in self._best_paths().values() if p}
        for name in replaced:
            path = osp.join(self.out_dir, name)
            if name not in kept and osp.isfile(path):
                self._remove(path)
                runner.logger.info(
                    f'Removed {path}: {runner._load_from} records it as '
                    'replaced by a new best checkpoint, and the interrupted '
                    'run did not remove it.')

    # -------------------------------------------------------------- saving
    def _save_checkpoint_with_step(self, runner, step, meta) -> None:
        obsolete = None
        if self.max_keep_ckpts > 0 and not (self.keep_ckpt_ids and
                                            self.keep_ckpt_ids[-1] == step):
            if len(self.keep_ckpt_ids) == self.max_keep_ckpts:
                obsolete = self.keep_ckpt_ids.popleft()
            self.keep_ckpt_ids.append(step)
            runner.message_hub.update_info('keep_ckpt_ids',
                                           list(self.keep_ckpt_ids))
        filename = self.filename_tmpl.format(step)
        self.last_ckpt = self.file_backend.join_path(self.out_dir, filename)
        runner.message_hub.update_info('last_ckpt', self.last_ckpt)
        runner.save_checkpoint(
            self.out_dir,
            filename,
            self.file_client_args,
            save_optimizer=self.save_optimizer,
            save_param_scheduler=self.save_param_scheduler,
            meta=meta,
            by_epoch=self.by_epoch,
            backend_args=self.backend_args,
            **self.args)
        if not is_main_process():
            return
        # the new file is complete: point at it, then drop the old one
        name = self.last_ckpt
        if self._is_local():
            name = osp.relpath(name, runner.work_dir)
        write_atomically(name, osp.join(runner.work_dir, 'last_checkpoint'))
        if obsolete is not None and obsolete != step:
            self._remove(
                self.file_backend.join_path(
                    self.out_dir, self.filename_tmpl.format(obsolete)))

    def _save_best_checkpoint(self, runner, metrics) -> None:
        if self.save_best and 'auto' not in self.key_indicators:
            for key in self.key_indicators:  # MMEngine: a bare KeyError
                selection_score(metrics, key,
                                'SPMLCheckpointHook(save_best=...) names')
        previous = self._best_paths()
        # recorded in the checkpoints written below, for a resume after a
        # kill before the removal at the end (_finish_best_removal)
        runner.message_hub.update_info(
            REPLACED_BEST_KEY,
            [osp.basename(p) for p in previous.values() if p])
        # MMEngine removes the previous best before writing the new one; hide
        # it so that a failed write still leaves a best checkpoint
        for key in previous:
            self._set_best_path(key, None)
        self._saving_best = True
        try:
            super()._save_best_checkpoint(runner, metrics)
        finally:
            self._saving_best = False
            for key, path in previous.items():
                if self._best_paths()[key] is None:
                    self._set_best_path(key, path)
        runner.message_hub.update_info(REPLACED_BEST_KEY, [])
        if not is_main_process():
            return
        for key, path in previous.items():
            if path is not None and path != self._best_paths()[key]:
                self._remove(path)
                runner.logger.info(
                    f'The previous best checkpoint {path} is removed')

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        meta = checkpoint.setdefault('meta', {})
        meta[SIGNATURE_KEY] = model_signature(unwrapped_model(runner))
        if not self._saving_best:
            return
        meta[VALIDATED_KEY] = True
        if not self.best_resume_state:
            return
        if isinstance(runner.optim_wrapper, OptimWrapper):
            checkpoint['optimizer'] = _to_cpu(
                runner.optim_wrapper.state_dict())
        schedulers = runner.param_schedulers
        if isinstance(schedulers, dict):
            checkpoint['param_schedulers'] = {
                name: [s.state_dict() for s in group]
                for name, group in schedulers.items()
            }
        elif schedulers:
            checkpoint['param_schedulers'] = [
                s.state_dict() for s in schedulers
            ]

    # ------------------------------------------------------------- helpers
    def _is_local(self) -> bool:
        return '://' not in str(self.out_dir)

    def _best_paths(self) -> Dict[Optional[str], Optional[str]]:
        if self.save_best is None:
            return {}
        if len(self.key_indicators) == 1:
            return {None: self.best_ckpt_path}
        return dict(self.best_ckpt_path_dict)

    def _set_best_path(self, key: Optional[str], path: Optional[str]) -> None:
        if key is None:
            self.best_ckpt_path = path
        else:
            self.best_ckpt_path_dict[key] = path

    @staticmethod
    def _best_info_key(key: Optional[str]) -> str:
        return 'best_ckpt' if key is None else f'best_ckpt_{key}'

    def _remove(self, path: str) -> None:
        """Remove a checkpoint of this run; never anything outside out_dir."""
        if self._is_local() and not _inside(path, self.out_dir):
            return
        if self.file_backend.isfile(path):
            self.file_backend.remove(path)
        elif self.file_backend.isdir(path):
            # checkpoints saved by DeepSpeed are folders
            self.file_backend.rmtree(path)
