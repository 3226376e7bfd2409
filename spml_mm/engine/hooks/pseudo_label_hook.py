import copy
import time
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from mmengine import dist
from mmengine.dataset import BaseDataset
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.optim import AmpOptimWrapper
from mmengine.runner.amp import autocast
from mmpretrain.registry import HOOKS, MODELS

from spml_mm.models.label_bank import (PSEUDO_NEGATIVE, PSEUDO_POSITIVE,
                                       LabelBank, Record, label_matrix,
                                       sample_indices)

#: Training-pipeline transforms that make the observed labels; the scoring
#: pipeline must apply them too.
LABEL_TRANSFORMS = ('SinglePositiveLabel', )


def scoring_pipeline(test_pipeline: Sequence[dict],
                     train_pipeline: Sequence[dict]) -> List[dict]:
    """The test-time pipeline, completed with the training labels.

    The training pipeline's label transforms (:data:`LABEL_TRANSFORMS`) are
    placed before the final packing step, and ``PackInputs`` keeps
    ``gt_label_full`` and ``sample_idx``.
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
    pack['algorithm_keys'] = keys + ('gt_label_full', ) * (
        'gt_label_full' not in keys)
    meta_keys = pack.get('meta_keys')
    if meta_keys is not None and 'sample_idx' not in meta_keys:
        pack['meta_keys'] = tuple(meta_keys) + ('sample_idx', )
    return pipeline[:-1] + label_steps + [pack]


def gather_records(
    records: Sequence[Record],
    num_samples: int,
    num_classes: int,
    classes: slice = slice(None)
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """Assemble every rank's records into full (N, C) matrices.

    Each rank contributes the rows it scored; all ranks receive all rows
    (``mmengine.dist.all_gather``), keep the first copy of a sample scored
    twice (the sampler pads the last rank), and end with identical matrices.
    ``classes`` restricts the columns gathered, so that a large training set
    is gathered block by block (:func:`update_in_blocks`).

    Args:
        records (Sequence[Record]): This rank's (index, scores, observed,
            full) batches.
        num_samples (int): Training set length N.
        num_classes (int): Number of classes C.
        classes (slice): The columns to gather. Defaults to all.

    Returns:
        tuple: Scores (N, C') float, observed (N, C') bool and true labels
        (N, C') bool, or None unless every sample carried ``gt_label_full``;
        C' the number of ``classes``.
    """
    width = len(range(num_classes)[classes])
    flags = dist.all_gather(
        torch.tensor([int(all(r[3] is not None for r in records))]))
    has_full = bool(torch.cat(flags).all())
    if records:
        device = records[0][1].device
        index = torch.cat([r[0] for r in records]).to(device)
        scores = torch.cat([r[1][:, classes] for r in records])
        # observed and true labels travel together, as one uint8 block
        labels = [torch.cat([r[2][:, classes] for r in records])]
        if has_full:
            labels.append(torch.cat([r[3][:, classes] for r in records]))
        labels = torch.cat([lab.to(device) for lab in labels],
                           1).to(torch.uint8)
    else:
        index = torch.zeros(0, dtype=torch.long)
        scores = torch.zeros(0, width)
        labels = torch.zeros(0, (1 + has_full) * width, dtype=torch.uint8)
    counts = torch.cat(dist.all_gather(torch.tensor([len(index)])))
    size = int(counts.max())

    def gather(rows: torch.Tensor) -> torch.Tensor:
        padded = rows.new_zeros((size, ) + rows.shape[1:])
        padded[:len(rows)] = rows
        parts = dist.all_gather(padded)
        return torch.cat([p[:n] for p, n in zip(parts, counts.tolist())])

    index, scores, labels = gather(index), gather(scores), gather(labels)
    if index.numel() and (index.min() < 0 or index.max() >= num_samples):
        raise ValueError(
            f'SPMLPseudoLabelHook: sample_idx {int(index.max())} outside the '
            f'training set of {num_samples} samples')
    first = torch.full((num_samples, ), len(index), dtype=torch.long,
                       device=index.device).scatter_reduce(
                           0, index,
                           torch.arange(len(index), device=index.device),
                           reduce='amin')
    missing = first == len(index)
    if missing.any():
        raise RuntimeError(
            f'SPMLPseudoLabelHook: {int(missing.sum())} of {num_samples} '
            f'training samples were not scored (first: sample_idx '
            f'{int(missing.nonzero()[0])}); every sample must be seen once '
            'per epoch (no drop_last, no dataset wrappers).')
    scores, labels = scores[first], labels[first].bool()
    observed, full = labels[:, :width], labels[:, width:]
    return scores, observed, full if has_full else None


def pseudo_label_stats(bank: LabelBank,
                       full: Optional[torch.Tensor]) -> Dict[str, float]:
    """Counts of the bank's pseudo-labels and, given the true labels (N, C),
    their accuracy in percent (paper Table 4); for diagnostics only."""
    stats = {}
    for name, state, truth in (('negative', PSEUDO_NEGATIVE, False),
                               ('positive', PSEUDO_POSITIVE, True)):
        chosen = bank.pseudo_label == state
        count = int(chosen.sum())
        stats[f'pseudo_{name}s'] = count
        if full is not None and count:
            true = full.to(chosen.device)
            wrong = int((chosen & (~true if truth else true)).sum())
            stats[f'pseudo_{name}_acc'] = 100 * (1 - wrong / count)
    return stats


def classes_per_block(num_samples: int, num_classes: int,
                      max_gather_mb: float) -> int:
    """The widest block of classes, a multiple of 8 (at least 8), whose
    (num_samples, block) float32 scores take at most ``max_gather_mb`` MB.
    """
    per_class = 4 * max(num_samples, 1) / 2**20
    return min(num_classes, max(8, int(max_gather_mb / per_class) // 8 * 8))


def update_in_blocks(bank: LabelBank,
                     records: Sequence[Record],
                     updater,
                     epoch: int,
                     max_epochs: int,
                     warmup_epochs: int,
                     max_gather_mb: float = 256.) -> Dict[str, float]:
    """Gather the scores and update the bank, one block of classes at a time.

    Every rank holds only its own rows of the scores (``records``). For each
    block of :func:`classes_per_block` classes, the block's columns are
    gathered from all ranks (:func:`gather_records`) and the ``updater``
    writes the bank's block (:meth:`LabelBank.class_block`), so no rank
    holds the (N, C) float32 scores at once; update rules act on each class
    independently, so the result equals one update over all classes.

    Args:
        bank (LabelBank): The bank to update.
        records (Sequence[Record]): This rank's scored batches.
        updater (BaseLabelUpdater): The update rule.
        epoch (int): The epoch just trained, 1-based.
        max_epochs (int): Epochs of the run (T).
        warmup_epochs (int): T_w.
        max_gather_mb (float): Size bound of a gathered score block.
            Defaults to 256.

    Returns:
        dict: The updater's numbers (integers summed over blocks, floats
        averaged over classes) followed by :func:`pseudo_label_stats`.
    """
    num_samples, num_classes = bank.num_samples, bank.num_classes
    width = classes_per_block(num_samples, num_classes, max_gather_mb)
    stats: Dict[str, float] = {}
    counts = {name: [0, 0.] for name in ('negative', 'positive')}
    has_full = True
    for start in range(0, num_classes, width):
        end = min(start + width, num_classes)
        scores, observed, full = gather_records(records, num_samples,
                                                num_classes,
                                                slice(start, end))
        with bank.class_block(start, end) as block:
            block_stats = updater.update(block, scores, observed, epoch,
                                         max_epochs, warmup_epochs)
            diagnostics = pseudo_label_stats(block, full)
        for key, value in block_stats.items():
            if isinstance(value, float):
                value *= (end - start) / num_classes
            stats[key] = stats.get(key, 0) + value
        for name, count in counts.items():
            num = diagnostics[f'pseudo_{name}s']
            count[0] += num
            count[1] += diagnostics.get(f'pseudo_{name}_acc', 0.) * num
        has_full = full is not None
        del scores, observed, full
    for name, (num, right) in counts.items():
        stats[f'pseudo_{name}s'] = num
        if has_full and num:
            stats[f'pseudo_{name}_acc'] = right / num
    return stats


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
    default; OPML's label correction plugs in the same way. When the
    training samples carry ``gt_label_full``, the log reports the number and
    accuracy of pseudo-labels (a diagnostic; no loss reads the true labels).

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
            :func:`update_in_blocks`). The result does not depend on it.
            While a block is gathered and updated a rank holds about 10
            times the bound (its copies, the decoded bank block, the
            update's buffers: 0.71 GB at 1M x 600 with 16-class blocks on 2
            ranks, ``tools/benchmark/label_bank_scale.py``). Defaults to 256
            (one block up to N x C = 67M entries).

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
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
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
        # of the checkpoint it loads (the idiom of MMEngine's LoggerHook)
        if isinstance(runner._train_loop, dict) or runner._train_loop is None:
            return
        if self.warmup_epochs >= runner.max_epochs:
            raise ValueError(
                f'warmup_epochs (T_w)={self.warmup_epochs} must be below '
                f'train_cfg.max_epochs={runner.max_epochs}')
        self.updater.check_schedule(self.warmup_epochs, runner.max_epochs)
        dataset = runner.train_dataloader.dataset
        if not isinstance(dataset, BaseDataset):
            raise ValueError(
                'SPMLPseudoLabelHook indexes the label bank by sample_idx of '
                'the training dataset and does not support dataset wrappers '
                f'({type(dataset).__name__}).')
        sample_indices([dataset[0]['data_samples']])
        self._bank(runner).allocate(len(dataset))

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
            records = self._score(runner, bank.num_classes)
        scored = time.perf_counter()
        stats = update_in_blocks(bank, records, self.updater, epoch,
                                 runner.max_epochs, self.warmup_epochs,
                                 self.max_gather_mb)
        updated = time.perf_counter()
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

    @torch.no_grad()
    def _score(self, runner, num_classes: int) -> List[Record]:
        """Probabilities of this rank's share of the training set."""
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        loader = self._scoring_loader(runner)
        amp = isinstance(runner.optim_wrapper, AmpOptimWrapper)
        training = model.training
        model.eval()
        records = []
        # the loader draws its base seed from the global generator; keep
        # the training run's random stream as if this pass did not happen
        with torch.random.fork_rng(devices=[]):
            for data in loader:
                with autocast(enabled=amp):
                    samples = model.test_step(data)
                scores = torch.stack([s.pred_score for s in samples]).float()
                records.append(
                    (sample_indices(samples).to(scores.device), scores,
                     label_matrix(samples, 'gt_label', num_classes),
                     label_matrix(samples, 'gt_label_full', num_classes)))
        model.train(training)
        return records
