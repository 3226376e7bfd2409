from typing import List, Optional, Sequence

import torch
from mmpretrain.models.heads import MultiLabelLinearClsHead
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..data_preprocessors import split_views
from ..label_banks.batch import sample_indices, scatter_indices
from .decision import apply_decision


def has_observed_negatives(data_samples: List[DataSample]) -> bool:
    """Whether a sample of the batch observes a negative (partial labels),
    from the lengths of their ``gt_label_neg``: no device read."""
    return any(len(s.get('gt_label_neg', ())) for s in data_samples)


@MODELS.register_module()
class SPMLLinearClsHead(MultiLabelLinearClsHead):
    """Linear multi-label head trained by an SPML loss.

    Works under any MMPretrain backbone and neck. Its loss is any registered
    loss called as ``loss(cls_score, target)`` with logits (B, C) and the
    0/1 matrix (B, C) of the samples' observed positives ``gt_label``. A
    batch with observed negatives (partial labels, the samples'
    ``gt_label_neg``) also passes their boolean mask (B, C) as
    ``observed_negative``; single-positive batches do not, so their losses
    run exactly the single-positive formulas.

    Args:
        num_classes (int): Number of classes C.
        in_channels (int): Channels of the input feature.
        loss (dict): Config of the SPML loss. Defaults to
            ``dict(type='ANLoss')``.
        thr (float, optional): Score threshold of ``pred_label``.
        topk (int, optional): Top-k of ``pred_label`` when ``thr`` is None.
        thresholds (Sequence[float], optional): A threshold t_k in [0, 1]
            per class (from ``tools/calibrate.py``): ``pred_label`` holds
            the classes whose score ``sigmoid(z_k)`` is at least t_k
            (:func:`apply_decision`, which replaces ``thr``; ``pred_score``
            stays the raw score). Defaults to None.
        consistency (dict, optional): A term on the logits of all views of
            multi-view training batches, e.g. ``dict(type='ViewConsistency',
            alpha=0.7)``, logged as ``loss_consistency``. The SPML loss
            always reads the first view only. Defaults to None.
        label_bank (dict, optional): A per-sample label state, a
            :class:`BaseLabelBank` such as ``dict(type='LabelBank')`` (EM +
            APL), sized and written by its hook; its :meth:`entries` of the
            batch are passed to the loss as keyword arguments. Defaults to
            None.
        init_cfg (dict, optional): Initialisation of the linear layer.
            Defaults to None: torch's default ``nn.Linear`` initialisation
            (uniform in +-1/sqrt(in_channels)), which every SPML release
            keeps; MMPretrain's heads use ``dict(type='Normal',
            layer='Linear', std=0.01)``, which starts training markedly
            slower under the SPML losses.

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=80,
        ...             in_channels=2048, loss=dict(type='ANLoss'))
    """

    def __init__(self,
                 num_classes: int,
                 in_channels: int,
                 loss: dict = dict(type='ANLoss'),
                 thr: Optional[float] = None,
                 topk: Optional[int] = None,
                 thresholds: Optional[Sequence[float]] = None,
                 consistency: Optional[dict] = None,
                 label_bank: Optional[dict] = None,
                 init_cfg: Optional[dict] = None):
        super().__init__(
            num_classes=num_classes,
            in_channels=in_channels,
            loss=loss,
            thr=thr,
            topk=topk,
            init_cfg=init_cfg)
        self.consistency = MODELS.build(consistency) if consistency else None
        self.register_buffer('class_thresholds', None, persistent=False)
        if thresholds is not None:
            self._set_thresholds(thresholds)
        self.label_bank = None
        if label_bank is not None:
            if label_bank.get('num_classes', num_classes) != num_classes:
                raise ValueError(
                    f'model.head.label_bank.num_classes='
                    f"{label_bank['num_classes']} but model.head.num_classes"
                    f'={num_classes}; remove label_bank.num_classes, the '
                    'head passes its own.')
            self.label_bank = MODELS.build(
                label_bank, default_args=dict(num_classes=num_classes))
            self.label_bank.check_loss(self.loss_module)

    def _set_thresholds(self, thresholds: Sequence[float]) -> None:
        t = torch.as_tensor(thresholds, dtype=torch.float64)
        if t.shape != (self.num_classes, ) or not (
                (t >= 0) & (t <= 1)).all():
            raise ValueError(
                f'model.head.thresholds must be {self.num_classes} numbers '
                f'in [0, 1] (one per class), got {list(thresholds)}')
        if self.thr is None:
            raise ValueError(
                f'model.head.thresholds and model.head.topk={self.topk} '
                'both choose the predicted labels: set one of them')
        # not in the state dict: a checkpoint fits with or without them
        self.register_buffer('class_thresholds', t.float(), persistent=False)

    def _get_predictions(self, cls_score: torch.Tensor,
                         data_samples: Optional[List[DataSample]]):
        scores = torch.sigmoid(cls_score)
        labels = apply_decision(
            scores, dict(thr=self.thr, topk=self.topk,
                         thresholds=self.class_thresholds))
        if data_samples is None:
            data_samples = [DataSample() for _ in range(len(scores))]
        for sample, score, label in zip(data_samples, scores, labels):
            sample.set_pred_score(score).set_pred_label(
                torch.nonzero(label).view(-1))
        return data_samples

    def observed_target(self,
                        data_samples: List[DataSample]) -> torch.Tensor:
        """The observed matrix s (B, C) on the head's device: +1 at
        ``gt_label``, -1 at ``gt_label_neg``, 0 elsewhere.

        Built from the samples' label indices, wherever they are (the data
        preprocessor moves ``gt_label`` to the device), with one
        concatenation and one scatter per kind of label; the lengths come
        from the tensors' shapes, so the host never waits on the device.
        The labels are not checked here: the datasets check them when they
        are built and ``SPMLDatasetCheckHook`` before training (indices in
        ``[0, num_classes)``, a positive per sample, no class both positive
        and negative).
        """
        device = self.fc.weight.device
        target = torch.zeros(len(data_samples), self.num_classes,
                             device=device)
        if has_observed_negatives(data_samples):
            negatives = [
                # PackInputs keeps them as the dataset's index array
                torch.as_tensor(s.get('gt_label_neg', ()),
                                dtype=torch.long).view(-1)
                for s in data_samples
            ]
            scatter_indices(target, negatives, -1.)
        scatter_indices(target, [s.gt_label for s in data_samples], 1.)
        return target

    def _get_loss(self, cls_score: torch.Tensor,
                  data_samples: List[DataSample], **kwargs) -> dict:
        views = split_views(cls_score, len(data_samples))
        if views[0].shape != (len(data_samples), self.num_classes):
            raise ValueError(
                f'logits of shape {tuple(views[0].shape)} for '
                f'{len(data_samples)} samples and {self.num_classes} classes')
        target = self.observed_target(data_samples)
        if has_observed_negatives(data_samples):
            kwargs['observed_negative'] = target < 0
            target = target.clamp(min=0)
        if self.label_bank is not None:
            # checked on the host, moved once for record and entries
            index = self.label_bank.rows(sample_indices(data_samples))
            self.label_bank.record(index, views[0], target, data_samples)
            kwargs.update(
                self.label_bank.entries(index, target,
                                        kwargs.get('observed_negative')))
        losses = dict(loss=self.loss_module(views[0], target, **kwargs))
        if self.consistency is not None:
            losses['loss_consistency'] = self.consistency(views)
        return losses
