# LASD (docs/methods/lasd.md) on the proxies' EfficientNet-Lite0 at 128 px
# (lasd.py), for configs/lasd/efficientnet-lite0_proxy-{voc,coco}.py (each
# adds its dataset, num_classes, Table 4's column and kbar), as
# lasd_resnet50.py is for the papers' datasets.
_base_ = ['../models/efficientnet_lite0.py', './lasd.py']

# Views. x is the proxies' training image (a random horizontal flip); x' and
# x'' are random resized crops of at least 70% of the area and flips, no
# colour jitter (glyph colours are random anyway).
original_view = [dict(type='RandomFlip', prob=0.5, direction='horizontal')]
augmented_view = [
    dict(type='RandomResizedCrop', scale=128, crop_ratio_range=(0.7, 1.)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
# the training pipeline of the proxy configs (train_pipeline), with
# data_preprocessor=dict(type='MultiViewDataPreprocessor')
multi_view_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[original_view, augmented_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]

model = dict(
    head=dict(
        loss=_base_.lasd_loss, consistency=dict(type='ViewConsistency')))
