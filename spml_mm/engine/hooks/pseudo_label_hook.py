import copy
import time
from typing import List, Sequence, Union

from mmengine.hooks import Hook
from mmengine.optim import AmpOptimWrapper
from mmpretrain.registry import HOOKS, MODELS

from spml_mm.engine.label_bank_scoring import (score_training_set,
                                               update_in_blocks)
from spml_mm.models.label_banks import LabelBank
from spml_mm.models.label_banks.batch import training_set_size
from .base import trains, unwrapped_model

#: Training-pipeline transforms that make the observed labels; the scoring
#: pipeline must apply them too.
LABEL_TRANSFORMS = ('SinglePositiveLabel', )


def scoring_pipeline(test_pipeline: Sequence[dict],
                     train_pipeline: Sequence[dict]) -> List[dict]:
    """The test-time pipeline, completed with the training labels.

    The training pipeline's label transforms (:data:`LABEL_TRANSFORMS`) are
    placed before the final packing step, and ``PackInputs`` keeps
    ``gt_label_full``, ``gt_label_neg`` (the observed negatives of partial
    labels) and ``sample_idx``.
    """
    pipeline = copy.deepcopy(list(test_pipeline))
    label_steps = [
        copy.deepcopy(t) for t in train_pipeline
        if t.get('type') in LABEL_TRANSFORMS
    ]
    pack = pipeline[-1] if pipeline else {}
    if pack.get('type') != 'PackInputs':
        raise ValueError(
            'SPMLPseudoLabelHook: the test pipeline must end with PackInputs '
            f'to be reused for scoring, got {pack.get("type")!r}; set the '
            "hook's `pipeline`.")
    keys = tuple(pack.get('algorithm_keys', ()))
    pack['algorithm_keys'] = keys + tuple(
        key for key in ('gt_label_full', 'gt_label_neg') if key not in keys)
    meta_keys = pack.get('meta_keys')
    if meta_keys is not None and 'sample_idx' not in meta_keys:
        pack['meta_keys'] = tuple(meta_keys) + ('sample_idx', )
    return pipeline[:-1] + label_steps + [pack]


@HOOKS.register_module()
class SPMLPseudoLabelHook(Hook):
    """Score the training set between epochs and update the label bank.

    At the end of every epoch ``e`` (1-based) with ``T_w <= e < T``, the
    hook scores every training image once with the model in eval mode, on
    its own pass over the training set (``pipeline``). The
    pass is split across ranks by the distributed sampler, the scores are
    gathered with ``mmengine.dist.all_gather`` and every rank applies the
    same update, so the banks stay identical without any per-iteration
    communication. The update after the last epoch is skipped: no training
    follows it (the released code runs it to no effect). The bank is sized
    from the training set before ``--resume`` restores it.

    The update rule is the ``updater`` (a :class:`BaseLabelUpdater`): APL by
    default; OPML's label correction plugs in the same way. The hook only
    decides when; the scoring pass, the gather and the update are
    :mod:`spml_mm.engine.label_bank_scoring`. Scores that are NaN or
    infinite are refused with a warning and leave the bank as it was.

    After each update the log line ``Pseudo-labels after epoch e: ...``
    gives the update's numbers and the count of negative and positive
    pseudo-labels and, when the training samples carry ``gt_label_full``,
    their precision (``pseudo_<kind>_acc``) and recall
    (``pseudo_<kind>_recall``) in percent (a diagnostic; no loss reads the
    true labels). The same numbers go to the message hub as ``train/<name>``
    scalars, so the training log and the visualizer's backends (e.g.
    ``TensorboardVisBackend`` in ``vis_backends``) plot them.

    Args:
        warmup_epochs (int): T_w, the first epoch after which the bank is
            updated, >= 1 and below ``train_cfg.max_epochs``. Table 6 of
            the EM paper: VOC 5, COCO 5, NUS-WIDE 4, CUB 3.
        updater (dict): Config of the update rule. Defaults to
            ``dict(type='AsymmetricPseudoLabeling', negative_proportion=0.9)``
            (theta = 0.9).
        pipeline (str | list[dict]): Pipeline of the scoring pass:
            ``'test'``, the val (else test) dataloader's pipeline with the
            training pipeline's label transforms (``SinglePositiveLabel``)
            and ``gt_label_full`` kept (:func:`scoring_pipeline`);
            ``'train'``, the training pipeline with its random
            augmentations (the EM + APL release scores the training loader);
            or a list of transforms. The pass reads the images in dataset
            order (the release's shuffle only changes which of equal scores
            is chosen). Defaults to ``'test'``.
        reuse_train_scores (bool): Update from the probabilities the
            training forward passes of the epoch computed instead of an
            extra pass (augmented images, a model that moves during the
            epoch). Defaults to False.
        max_gather_mb (float): Bound, in MB, on the scores gathered on every
            rank at once: the (N, C) scores are gathered and the bank
            updated in blocks of classes whose (N, block) float32 scores fit
            in it (a multiple of 8 classes, at least 8; see
            :func:`~spml_mm.engine.label_bank_scoring.update_in_blocks`).
            The result does not depend on it. The gather of a block holds
            at most twice the bound on a rank (the block's scores and
            labels, 1.25 times, and one round of rows; 1.7 times measured
            on 2 gloo ranks, ``tests/engine/test_label_bank_scoring.py``);
            the update rule's buffers come on top. Defaults to 256 (one
            block up to N x C = 67M entries).

    Example:
        >>> custom_hooks = [
        ...     dict(type='SafeCheckpointHook'),
        ...     dict(type='SPMLDatasetCheckHook'),
        ...     dict(type='SPMLPseudoLabelHook', warmup_epochs=5,
        ...          updater=dict(type='AsymmetricPseudoLabeling',
        ...                       negative_proportion=0.9)),
        ... ]
    """

    # before CheckpointHook, so that a checkpoint holds the epoch's update
    priority = 'NORMAL'

    def __init__(self,
                 warmup_epochs: int,
                 updater: dict = dict(
                     type='AsymmetricPseudoLabeling',
                     negative_proportion=0.9),
                 pipeline: Union[str, List[dict]] = 'test',
                 reuse_train_scores: bool = False,
                 max_gather_mb: float = 256.):
        if not isinstance(warmup_epochs, int) or warmup_epochs < 1:
            raise ValueError('warmup_epochs (T_w) must be an int >= 1, got '
                             f'{warmup_epochs!r}')
        if not isinstance(max_gather_mb, (int, float)) or max_gather_mb <= 0:
            raise ValueError('max_gather_mb must be a number > 0, got '
                             f'{max_gather_mb!r}')
        if isinstance(pipeline, str) and pipeline not in ('train', 'test'):
            raise ValueError("pipeline must be 'train', 'test' or a list of "
                             f'transforms, got {pipeline!r}')
        self.max_gather_mb = max_gather_mb
        self.warmup_epochs = warmup_epochs
        self.updater = MODELS.build(updater)
        self.pipeline = pipeline
        self.reuse_train_scores = reuse_train_scores
        self._loader = None

    def _bank(self, runner) -> LabelBank:
        model = unwrapped_model(runner)
        banks = [m for m in model.modules() if isinstance(m, LabelBank)]
        if len(banks) != 1:
            raise ValueError(
                f'SPMLPseudoLabelHook needs exactly one LabelBank in the '
                f'model, found {len(banks)}; set '
                "model.head.label_bank=dict(type='LabelBank').")
        return banks[0]

    def _updates_after(self, runner, epoch: int) -> bool:
        return self.warmup_epochs <= epoch < runner.max_epochs

    def before_run(self, runner) -> None:
        # Runner.test() calls before_run too; there the bank keeps the size
        # of the checkpoint it loads
        if not trains(runner):
            return
        if self.warmup_epochs >= runner.max_epochs:
            raise ValueError(
                f'warmup_epochs (T_w)={self.warmup_epochs} must be below '
                f'train_cfg.max_epochs={runner.max_epochs}')
        self.updater.check_schedule(self.warmup_epochs, runner.max_epochs)
        self._bank(runner).allocate(
            training_set_size(runner.train_dataloader.dataset,
                              'SPMLPseudoLabelHook', 'the label bank'))

    def before_train_epoch(self, runner) -> None:
        if self.reuse_train_scores and self._updates_after(
                runner, runner.epoch + 1):
            self._bank(runner).start_recording()

    def after_train_epoch(self, runner) -> None:
        epoch = runner.epoch + 1
        if not self._updates_after(runner, epoch):
            return
        bank = self._bank(runner)
        start = time.perf_counter()
        if self.reuse_train_scores:
            records = bank.stop_recording()
        else:
            model = unwrapped_model(runner)
            records = score_training_set(
                model, self._scoring_loader(runner), bank.num_classes,
                isinstance(runner.optim_wrapper, AmpOptimWrapper))
        scored = time.perf_counter()
        stats = update_in_blocks(bank, records, self.updater, epoch,
                                 runner.max_epochs, self.warmup_epochs,
                                 self.max_gather_mb)
        updated = time.perf_counter()
        # the training log and the visualizer backends read the hub's
        # train/ scalars from the next iteration on
        for key, value in stats.items():
            runner.message_hub.update_scalar(f'train/{key}', value)
        if 'non_finite_scores' in stats:
            return  # refused; update_in_blocks has said why
        summary = ', '.join(
            f'{k}: {v:.2f}' if isinstance(v, float) else f'{k}: {v}'
            for k, v in stats.items())
        source = 'training scores' if self.reuse_train_scores else 'scoring'
        runner.logger.info(
            f'Pseudo-labels after epoch {epoch}: {summary} ({source} '
            f'{scored - start:.2f} s, gather and update '
            f'{updated - scored:.3f} s)')

    def _scoring_loader(self, runner):
        if self._loader is not None:
            return self._loader
        cfg = runner.cfg
        loader_cfg = cfg.get('val_dataloader') or cfg.get('test_dataloader')
        pipeline = self.pipeline
        train_pipeline = cfg.train_dataloader['dataset'].get('pipeline', [])
        if pipeline == 'train':
            pipeline = copy.deepcopy(train_pipeline)
        elif pipeline == 'test':
            if not loader_cfg:
                raise ValueError(
                    'SPMLPseudoLabelHook scores with the val or test '
                    "dataloader's pipeline; the config has neither, so set "
                    "the hook's `pipeline`.")
            pipeline = scoring_pipeline(loader_cfg['dataset']['pipeline'],
                                        train_pipeline)
        loader_cfg = copy.deepcopy(loader_cfg or cfg.train_dataloader)
        loader_cfg.pop('batch_sampler', None)
        # assigned, not update()d: ConfigDict.update merges nested dicts,
        # which would leak val-set keys (split, indices) into the dataset
        loader_cfg['dataset'] = copy.deepcopy(cfg.train_dataloader['dataset'])
        loader_cfg['sampler'] = dict(type='DefaultSampler', shuffle=False)
        loader_cfg['dataset']['pipeline'] = pipeline
        self._loader = runner.build_dataloader(loader_cfg, seed=runner.seed)
        if len(self._loader.dataset) != len(runner.train_dataloader.dataset):
            raise RuntimeError(
                'SPMLPseudoLabelHook: the scoring dataset has '
                f'{len(self._loader.dataset)} samples but the training set '
                f'{len(runner.train_dataloader.dataset)}')
        return self._loader
