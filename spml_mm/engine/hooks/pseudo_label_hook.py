import copy
import time
from typing import Dict, List, Optional, Sequence, Tuple

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
    records: Sequence[Record], num_samples: int, num_classes: int
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """Assemble every rank's records into full (N, C) matrices.

    Each rank contributes the rows it scored; all ranks receive all rows
    (``mmengine.dist.all_gather``), keep the first copy of a sample scored
    twice (the sampler pads the last rank), and end with identical matrices.

    Args:
        records (Sequence[Record]): This rank's (index, scores, observed,
            full) batches.
        num_samples (int): Training set length N.
        num_classes (int): Number of classes C.

    Returns:
        tuple: Scores (N, C) float, observed (N, C) bool and true labels
        (N, C) bool, or None unless every sample carried ``gt_label_full``.
    """
    if records:
        device = records[0][1].device
        index = torch.cat([r[0].to(device) for r in records])
        scores = torch.cat([r[1] for r in records])
        has_full = all(r[3] is not None for r in records)
        full = [r[3] if has_full else r[2] for r in records]
        labels = torch.cat([
            torch.cat([r[2].to(device), f.to(device)], 1)
            for r, f in zip(records, full)
        ]).to(torch.uint8)
    else:
        device = torch.device('cpu')
        index = torch.zeros(0, dtype=torch.long)
        scores = torch.zeros(0, num_classes)
        labels = torch.zeros(0, 2 * num_classes, dtype=torch.uint8)
        has_full = True
    counts = torch.cat(dist.all_gather(torch.tensor([len(index)])))
    flags = torch.cat(dist.all_gather(torch.tensor([int(has_full)])))
    size = int(counts.max())

    def gather(rows: torch.Tensor) -> torch.Tensor:
        padded = rows.new_zeros((size, ) + rows.shape[1:])
        padded[:len(rows)] = rows
        parts = dist.all_gather(padded)
        return torch.cat([p[:n] for p, n in zip(parts, counts.tolist())])

    index = gather(index.to(device))
    scores, labels = gather(scores), gather(labels).bool()
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
    scores, labels = scores[first], labels[first]
    observed, full = labels[:, :num_classes], labels[:, num_classes:]
    return scores, observed, full if bool(flags.all()) else None


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
            right = (full.to(chosen.device)[chosen] == truth).float().mean()
            stats[f'pseudo_{name}_acc'] = 100 * float(right)
    return stats


@HOOKS.register_module()
class SPMLPseudoLabelHook(Hook):
    """Score the training set between epochs and update the label bank.

    At the end of every epoch ``e`` (1-based) with ``T_w <= e < T``, the
    hook scores every training image once with the model in eval mode, on
    its own pass over the training set with the test-time pipeline. The
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
        pipeline (list[dict], optional): Pipeline of the scoring pass.
            Defaults to the val (else test) dataloader's pipeline with the
            training pipeline's label transforms (``SinglePositiveLabel``)
            and ``gt_label_full`` kept (:func:`scoring_pipeline`).
        reuse_train_scores (bool): Update from the probabilities the
            training forward passes of the epoch computed instead of an
            extra pass (augmented images, a model that moves during the
            epoch). Defaults to False.

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
                 pipeline: Optional[List[dict]] = None,
                 reuse_train_scores: bool = False):
        if not isinstance(warmup_epochs, int) or warmup_epochs < 1:
            raise ValueError('warmup_epochs (T_w) must be an int >= 1, got '
                             f'{warmup_epochs!r}')
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
        scores, observed, full = gather_records(records, bank.num_samples,
                                                bank.num_classes)
        scored = time.perf_counter()
        stats = self.updater.update(bank, scores, observed, epoch,
                                    runner.max_epochs, self.warmup_epochs)
        updated = time.perf_counter()
        stats.update(pseudo_label_stats(bank, full))
        summary = ', '.join(
            f'{k}: {v:.2f}' if isinstance(v, float) else f'{k}: {v}'
            for k, v in stats.items())
        source = 'training scores' if self.reuse_train_scores else 'scoring'
        runner.logger.info(
            f'Pseudo-labels after epoch {epoch}: {summary} ({source} '
            f'{scored - start:.2f} s, update {updated - scored:.3f} s)')

    def _scoring_loader(self, runner):
        if self._loader is not None:
            return self._loader
        cfg = runner.cfg
        loader_cfg = cfg.get('val_dataloader') or cfg.get('test_dataloader')
        pipeline = self.pipeline
        if pipeline is None:
            if not loader_cfg:
                raise ValueError(
                    'SPMLPseudoLabelHook scores with the val or test '
                    "dataloader's pipeline; the config has neither, so set "
                    "the hook's `pipeline`.")
            pipeline = scoring_pipeline(
                loader_cfg['dataset']['pipeline'],
                cfg.train_dataloader['dataset'].get('pipeline', []))
        loader_cfg = copy.deepcopy(loader_cfg or cfg.train_dataloader)
        loader_cfg.pop('batch_sampler', None)
        loader_cfg.update(
            dataset=copy.deepcopy(cfg.train_dataloader['dataset']),
            sampler=dict(type='DefaultSampler', shuffle=False))
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
