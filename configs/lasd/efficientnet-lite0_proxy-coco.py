# LASD (docs/methods.md) on the COCO-like proxy: Table 4's COCO values
# (lambda_pos = 0.03, tau = 0.9, alpha = 0.1), kbar = 2.94 and K = 80
# (Theorem 5.4),
# gammas 0 / 4, 10 epochs; x' and x'' are random resized crops (70-100%)
# and flips, no colour jitter (glyph colours are random anyway),
# fine-tuning EfficientNet-Lite0 at 128 px (README, Proxy benchmark;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py', '../_base_/methods/lasd.py'
]

original_view = [dict(type='RandomFlip', prob=0.5, direction='horizontal')]
augmented_view = [
    dict(type='RandomResizedCrop', scale=128, crop_ratio_range=(0.7, 1.)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[original_view, augmented_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

model = dict(
    head=dict(
        num_classes=80,
        loss=dict(
            type='LASDLoss',
            lambda_pos=0.03,
            tau=0.9,
            gamma_pos=0.,
            gamma_neg=4.,
            avg_positives=2.94,
            num_classes=80),
        consistency=dict(type='ViewConsistency', alpha=0.1)))
