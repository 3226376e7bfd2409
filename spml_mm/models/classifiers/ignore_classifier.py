"""IGNORE's training step: the image, its strong view and the image masked
to the observed positive's class-activation map, through one backbone."""
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmpretrain.models.classifiers import ImageClassifier
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..data_preprocessors import split_views
from ..losses.ignore_loss import IGNORELoss

#: how the positive's CAM is scaled before the threshold
CAM_NORMS = ('batch', 'image')


def positive_cam(feature_map: torch.Tensor, weight: torch.Tensor,
                 bias, target: torch.Tensor) -> torch.Tensor:
    """The class activation map (B, h, w) of each image's observed positive:
    ``w_k . F + b_k`` at every position of the last feature map ``F``
    (B, D, h, w), with the linear classifier's row ``k`` (the release's
    1x1-convolution output at that class). Built from ``target @ weight``
    (B, D), so no index leaves the device; a row with several positives gets
    their sum (its mask is all ones, :func:`cam_mask`)."""
    target = target.to(weight.dtype)
    cam = torch.einsum('bdhw,bd->bhw', feature_map.to(weight.dtype),
                       target @ weight)
    if bias is not None:
        cam = cam + (target @ bias)[:, None, None]
    return cam


def cam_mask(cam: torch.Tensor, target: torch.Tensor, size: Tuple[int, int],
             threshold: float = 0.8, norm: str = 'batch') -> torch.Tensor:
    """The 0/1 image mask (B, 1, H, W) that keeps the observed positive's
    discriminative area (the release's ``generate_resnet_cam_and_mask``).

    ``norm='batch'`` is the release's ``cam_minmax_norm``: at every position
    the CAMs of the batch's single-positive images are shifted by their
    minimum over the batch and divided by their maximum over the batch
    (``(cam - min) / max``); ``'image'`` scales each image's map to [0, 1]
    by its own minimum and maximum. The map is resized to the image
    (bilinear, ``align_corners=False``) and kept where it exceeds
    ``threshold``. Images without exactly one observed positive keep every
    pixel. On the device, without a host read.
    """
    if norm not in CAM_NORMS:
        raise ValueError(f'cam_norm must be one of {CAM_NORMS}, got {norm!r}')
    single = target.sum(1) == 1
    if norm == 'batch':
        rows = single[:, None, None]
        low = cam.masked_fill(~rows, float('inf')).amin(0)
        high = cam.masked_fill(~rows, float('-inf')).amax(0)
        scaled = (cam - low) / high
    else:
        flat = cam.flatten(1)
        low = flat.amin(1)[:, None, None]
        high = flat.amax(1)[:, None, None]
        scaled = (cam - low) / (high - low).clamp(min=1e-12)
    scaled = F.interpolate(
        scaled[:, None], size=size, mode='bilinear', align_corners=False)
    keep = (scaled > threshold) | ~single[:, None, None, None]
    return keep.to(cam.dtype)


@MODELS.register_module()
class IGNOREClassifier(ImageClassifier):
    """:class:`ImageClassifier` trained by IGNORE (Song et al., ECCV 2024).

    Its training batches hold two views of each image (a ``MultiView``
    pipeline: the image, then its strong augmentation) stacked by
    :class:`MultiViewDataPreprocessor`. A step runs the backbone three
    times, as the release's ``train_resnet.py`` does, in its order: the
    image (its logits ``z`` and last feature map), the strong view
    (``z_s``), and, without gradient (the loss reads only its detached gap),
    the image masked by :func:`cam_mask` of the observed positive's CAM
    (``z_m``); the head's loss, an :class:`IGNORELoss`, gets all three.
    Batch-norm layers see the three batches in training mode, as in the
    release. Validation, test and inference are the plain classifier's.

    The CAM needs the backbone's last feature map before pooling and a
    linear classifier on its pooled mean: any backbone whose last output is
    (B, D, h, w) (ResNet, VGG, EfficientNet, ConvNeXt with
    ``gap_before_final_norm=False``, Swin), the ``GlobalAveragePooling``
    neck and an ``SPMLLinearClsHead``; others are refused.

    Args:
        cam_threshold (float): ``--cam_threshold``, the share of the scaled
            CAM the mask keeps above. Defaults to 0.8.
        cam_norm (str): ``'batch'`` (the release's scaling) or ``'image'``.
            Defaults to ``'batch'``.
        backbone, neck, head and the other keyword arguments: those of
            :class:`ImageClassifier`; the head's loss gets the head's
            ``num_classes`` unless it sets its own.
    """

    def __init__(self, backbone: dict, neck: dict = None, head: dict = None,
                 cam_threshold: float = 0.8, cam_norm: str = 'batch',
                 **kwargs):
        if cam_norm not in CAM_NORMS:
            raise ValueError(
                f'IGNOREClassifier: cam_norm must be one of {CAM_NORMS}, '
                f'got {cam_norm!r}')
        if isinstance(head, dict) and isinstance(
                head.get('loss'), dict) and head['loss'].get(
                    'type') in ('IGNORELoss', IGNORELoss):
            loss = dict(head['loss'])
            loss.setdefault('num_classes', head.get('num_classes'))
            head = dict(head, loss=loss)
        super().__init__(backbone, neck=neck, head=head, **kwargs)
        if type(self.neck).__name__ != 'GlobalAveragePooling' or getattr(
                self.neck, 'gap', None) is None or not isinstance(
                    self.neck.gap, nn.AdaptiveAvgPool2d):
            raise ValueError(
                'IGNOREClassifier needs neck=dict(type='
                "'GlobalAveragePooling') (2-D): the class activation map is "
                'the linear classifier on the unpooled feature map, so the '
                f'logits must be its spatial mean; got {self.neck!r}')
        if not isinstance(getattr(self.head, 'fc', None), nn.Linear):
            raise ValueError(
                'IGNOREClassifier needs a head with a linear classifier fc '
                "(type='SPMLLinearClsHead')")
        if not isinstance(getattr(self.head, 'loss_module', None),
                          IGNORELoss):
            raise ValueError(
                "IGNOREClassifier trains with loss=dict(type='IGNORELoss'), "
                f'got {type(self.head.loss_module).__name__}')
        if self.head.loss_module.num_classes != self.head.num_classes:
            raise ValueError(
                f'model.head.loss.num_classes='
                f'{self.head.loss_module.num_classes} but model.head.'
                f'num_classes={self.head.num_classes}')
        self.cam_threshold = cam_threshold
        self.cam_norm = cam_norm

    def feature_map(self, inputs: torch.Tensor) -> torch.Tensor:
        """The backbone's last output, which must be a (B, D, h, w) map."""
        fmap = self.backbone(inputs)[-1]
        if fmap.dim() != 4:
            raise ValueError(
                'IGNOREClassifier needs the backbone\'s last feature map '
                '(B, D, h, w) to build the CAM; '
                f'{type(self.backbone).__name__} gives shape '
                f'{tuple(fmap.shape)} (ConvNeXt: set '
                'gap_before_final_norm=False; a ViT has no such map)')
        return fmap

    def logits(self, inputs: torch.Tensor):
        """Logits (B, C) and the last feature map of ``inputs``."""
        fmap = self.feature_map(inputs)
        return self.head(self.neck((fmap, ))), fmap

    def loss(self, inputs, data_samples: List[DataSample]) -> dict:
        if not isinstance(inputs, torch.Tensor):
            raise ValueError('IGNOREClassifier takes stacked image tensors')
        views = split_views(inputs, len(data_samples))
        if views.size(0) != 2:
            raise ValueError(
                f'IGNOREClassifier trains on 2 views of each image (the '
                f'image, then its strong view: a MultiView pipeline with '
                f'num_views=[1, 1] and MultiViewDataPreprocessor); got '
                f'{views.size(0)}')
        image, strong = views[0], views[1]
        z, fmap = self.logits(image)
        z_strong, _ = self.logits(strong)
        with torch.no_grad():
            target = self.head.observed_target(data_samples).clamp(min=0)
            fc = self.head.fc
            cam = positive_cam(fmap.detach(), fc.weight, fc.bias, target)
            mask = cam_mask(cam, target, image.shape[-2:],
                            self.cam_threshold, self.cam_norm)
            z_masked, _ = self.logits(image * mask.to(image.dtype))
        return self.head._get_loss(
            z, data_samples, mask_logits=z_masked, strong_logits=z_strong)
