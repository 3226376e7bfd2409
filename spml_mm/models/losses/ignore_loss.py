"""IGNORE: information gap-based false negative loss rejection (Song et al.,
ECCV 2024).

The loss of the three forward passes that :class:`IGNOREClassifier` runs
per training step: the logits ``z`` of the image, ``z_m`` of the image
masked to the observed positive's class-activation area, and ``z_s`` of a
strongly augmented view. An unobserved class whose logit falls a lot once
its region is masked out, ``|z - z_m| > gap threshold`` (and, with ``lat``,
whose logit is above its class's running average), is a likely false
negative: after the warm-up its assumed-negative term is rejected.
"""
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..epoch_scheduled import EpochScheduled


def ignore_rejection(z: torch.Tensor, z_masked: torch.Tensor,
                     s: torch.Tensor, gap_threshold: torch.Tensor,
                     avg_threshold: torch.Tensor,
                     lat: bool = True) -> torch.Tensor:
    """The entries (B, C) in 0/1 whose assumed-negative term is rejected:
    unobserved, with the information gap ``|z - z_m|`` above
    ``gap_threshold`` and (``lat``) the logit above the class's
    ``avg_threshold``. Detached; ``s`` is 0/1 (observed positives)."""
    z, z_masked = z.detach(), z_masked.detach()
    flagged = (z - z_masked).abs() > gap_threshold
    if lat:
        flagged = flagged & (z > avg_threshold)
    return (flagged.to(s.dtype) - s).clamp(0., 1.)


def ignore_loss(z: torch.Tensor,
                z_strong: torch.Tensor,
                s: torch.Tensor,
                reject: torch.Tensor,
                spbc_weight: float = 0.5,
                ignore_weight: float = 1.,
                reg_weight: float = 0.5,
                strong_aug: bool = True,
                ignore: bool = True,
                reg: bool = True,
                eps: float = 0.) -> torch.Tensor:
    """IGNORE's objective (the release's ``losses.ignore_loss``)::

        L = spbc_weight * mean_{s=1} -log p(z)
          + ignore_weight * sum(keep * AN(z_s)) / sum(keep)
          + reg_weight * mean (z_s - z)^2

    with ``AN(x) = -s log p(x) - (1 - s) log(1 - p(x))`` of the strong
    view's logits (of ``z`` when ``strong_aug`` is False), ``keep = 1 -
    reject`` (every entry when ``ignore`` is False) and the consistency
    term only with ``reg``. The means over the observed positives and the
    kept entries are ratios of sums, so no shape depends on the data.

    Args:
        z (torch.Tensor): Logits of the image, (B, C).
        z_strong (torch.Tensor): Logits of its strong view, (B, C).
        s (torch.Tensor): Observed positives in 0/1, (B, C).
        reject (torch.Tensor): Rejected entries in 0/1, (B, C)
            (:func:`ignore_rejection`; zeros in the warm-up).
        spbc_weight (float): Weight of the single-positive BCE.
        ignore_weight (float): Weight of the rejected AN loss.
        reg_weight (float): Weight of the strong view's consistency.
        strong_aug (bool): AN loss on the strong view (else on ``z``).
        ignore (bool): Reject the flagged entries (else plain AN).
        reg (bool): Add the consistency term.
        eps (float): The release's ``-log(x + eps)`` (1e-5 there); 0, the
            default, computes from log-sigmoids, exact at any logit.

    Returns:
        torch.Tensor: The scalar loss.
    """
    # float32 at least (autocast's half logits), float64 kept
    z = z if z.dtype == torch.float64 else z.float()
    z_strong = z_strong.to(z.dtype)
    s = s.to(z.dtype)

    def neg_log_p(x):  # -log p, -log(1 - p)
        if eps:
            p = torch.sigmoid(x)
            return -torch.log(p + eps), -torch.log(1 - p + eps)
        return -F.logsigmoid(x), -F.logsigmoid(-x)

    pos, _ = neg_log_p(z)
    spbc = (s * pos).sum() / s.sum().clamp(min=1.)
    x = z_strong if strong_aug else z
    pos_x, neg_x = neg_log_p(x)
    an = s * pos_x + (1 - s) * neg_x
    keep = 1 - reject.to(z.dtype) if ignore else torch.ones_like(an)
    rejected_an = (keep * an).sum() / keep.sum().clamp(min=1.)
    loss = spbc_weight * spbc + ignore_weight * rejected_an
    if reg:
        loss = loss + reg_weight * F.mse_loss(z_strong, z)
    return loss


@MODELS.register_module()
class IGNORELoss(nn.Module, EpochScheduled):
    """IGNORE's loss and its two running thresholds (Song et al., ECCV 2024;
    release ``gyeong-ryeol-song/SPML-IGNORE``, ``losses.py``,
    ``train_resnet.py``).

    Called by :class:`IGNOREClassifier` as ``loss(z, target,
    mask_logits=z_m, strong_logits=z_s)``; in every training step it first
    moves the thresholds (as the release does, before the loss)::

        gap_threshold <- gap_lambda * gap_threshold
                         + (1 - gap_lambda) * mean_{s=1} |z - z_m|
        avg_threshold <- avg_lambda * avg_threshold
                         + (1 - avg_lambda) * mean_batch z      (per class)

    then rejects the assumed negatives :func:`ignore_rejection` flags (from
    epoch ``warm_up`` on, 0-based: the release's ``epoch > warm_up``,
    1-based) and returns :func:`ignore_loss`. The thresholds are persistent
    buffers: checkpoints save them and ``--resume`` restores them. Each
    process moves its own (the release trains on one GPU).

    Args:
        num_classes (int): Classes C (the per-class average threshold);
            :class:`IGNOREClassifier` passes its head's.
        spbc_weight (float): ``--spbc_weight``. Defaults to 0.5 (the
            release's parser; its README's ResNet-50 VOC run uses 0.1,
            as the VOC config does).
        ignore_weight (float): ``--ignore_weight``. Defaults to 1.
        reg_weight (float): ``--reg_weight``. Defaults to 0.5.
        warm_up (int): ``--warm_up``, epochs without rejection. Defaults
            to 3.
        gap_lambda (float): ``--gap_lambda``, the gap threshold's EMA
            decay. Defaults to 0.999.
        avg_lambda (float): ``--avg_lambda``, the average logit's EMA
            decay. Defaults to 0.999.
        lat (bool): ``--lat``, also require the logit above its class's
            average. Defaults to True.
        strong_aug (bool): ``--strong_aug``, the AN loss on the strong
            view. Defaults to True.
        ignore (bool): ``--ignore``, reject the flagged entries. Defaults
            to True.
        reg (bool): ``--reg``, the consistency term. Defaults to True.
        eps (float): The release's ``LOG_EPSILON`` in ``-log(x + eps)``;
            0 computes from log-sigmoids. Defaults to 0.
    """

    def __init__(self,
                 num_classes: int,
                 spbc_weight: float = 0.5,
                 ignore_weight: float = 1.,
                 reg_weight: float = 0.5,
                 warm_up: int = 3,
                 gap_lambda: float = 0.999,
                 avg_lambda: float = 0.999,
                 lat: bool = True,
                 strong_aug: bool = True,
                 ignore: bool = True,
                 reg: bool = True,
                 eps: float = 0.):
        super().__init__()
        if not (isinstance(num_classes, int) and num_classes > 0):
            raise ValueError(f'IGNORELoss: num_classes must be a positive '
                             f'int, got {num_classes!r}')
        for name, value in (('gap_lambda', gap_lambda),
                            ('avg_lambda', avg_lambda)):
            if not 0. <= value <= 1.:
                raise ValueError(
                    f'IGNORELoss: {name} is an EMA decay in [0, 1], got '
                    f'{value}')
        for name, value in (('spbc_weight', spbc_weight),
                            ('ignore_weight', ignore_weight),
                            ('reg_weight', reg_weight), ('eps', eps)):
            if value < 0:
                raise ValueError(
                    f'IGNORELoss: {name} must be >= 0, got {value}')
        if not (isinstance(warm_up, int) and warm_up >= 0):
            raise ValueError(
                f'IGNORELoss: warm_up is a number of epochs >= 0, got '
                f'{warm_up!r}')
        self.num_classes = num_classes
        self.spbc_weight = spbc_weight
        self.ignore_weight = ignore_weight
        self.reg_weight = reg_weight
        self.warm_up = warm_up
        self.gap_lambda = gap_lambda
        self.avg_lambda = avg_lambda
        self.lat = lat
        self.strong_aug = strong_aug
        self.ignore = ignore
        self.reg = reg
        self.eps = eps
        self.epoch = None
        # the release's Gap_threshold = 0 and Avg_threshold = zeros(1, C)
        self.register_buffer('gap_threshold', torch.zeros(()))
        self.register_buffer('avg_threshold', torch.zeros(num_classes))

    @property
    def rejecting(self) -> bool:
        """Whether the current epoch is past the warm-up."""
        if self.epoch is None:
            raise RuntimeError(
                'IGNORELoss has no epoch: add default_hooks.epoch_schedule='
                "dict(type='SPMLEpochHook'), which sets it before every "
                'training epoch.')
        return self.epoch >= self.warm_up

    def set_epoch(self, epoch: int, max_epochs: int) -> Dict[str, float]:
        """Enter training epoch ``epoch`` (0-based)."""
        self.epoch = epoch
        return dict(ignore_rejecting=float(self.rejecting))

    @torch.no_grad()
    def update_thresholds(self, z: torch.Tensor, z_masked: torch.Tensor,
                          s: torch.Tensor) -> None:
        """One EMA step of both thresholds from a batch (in place, on the
        device)."""
        z = z.detach().to(self.avg_threshold.dtype)
        gap = (z - z_masked.detach().to(z.dtype)).abs()
        s = s.to(z.dtype)
        gap_mean = (gap * s).sum() / s.sum().clamp(min=1.)
        self.gap_threshold.mul_(self.gap_lambda).add_(
            (1 - self.gap_lambda) * gap_mean)
        self.avg_threshold.mul_(self.avg_lambda).add_(
            (1 - self.avg_lambda) * z.mean(0))

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                mask_logits: Optional[torch.Tensor] = None,
                strong_logits: Optional[torch.Tensor] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """The loss of a training batch.

        Args:
            cls_score (torch.Tensor): Logits of the images, (B, C).
            target (torch.Tensor): Observed positives in 0/1, (B, C).
            mask_logits (torch.Tensor): Logits of the masked images.
            strong_logits (torch.Tensor): Logits of the strong views.
            observed_negative (torch.Tensor, optional): Observed negatives
                (partial labels): assumed negatives never rejected.
            avg_factor (float, optional): Not used.
        """
        if mask_logits is None or strong_logits is None:
            raise ValueError(
                'IGNORELoss needs the logits of the masked image and of the '
                "strong view: use model=dict(type='IGNOREClassifier', ...) "
                'with a two-view training pipeline (configs/ignore/)')
        for name, x in (('mask_logits', mask_logits),
                        ('strong_logits', strong_logits)):
            if x.shape != cls_score.shape:
                raise ValueError(
                    f'IGNORELoss: {name} of shape {tuple(x.shape)} for '
                    f'logits of shape {tuple(cls_score.shape)}')
        self.update_thresholds(cls_score, mask_logits, target)
        if self.rejecting:
            reject = ignore_rejection(cls_score, mask_logits, target,
                                      self.gap_threshold, self.avg_threshold,
                                      self.lat)
            if observed_negative is not None:
                reject = reject * (~observed_negative).to(reject.dtype)
        else:
            reject = torch.zeros_like(cls_score, dtype=torch.float32)
        return ignore_loss(cls_score, strong_logits, target, reject,
                           self.spbc_weight, self.ignore_weight,
                           self.reg_weight, self.strong_aug, self.ignore,
                           self.reg, self.eps)
