# IGNORE (docs/methods/ignore.md) on the release's ResNet-50 recipe
# (ignore.py), for configs/ignore/resnet50_{voc,coco,nuswide,cub}.py (each
# adds its dataset, num_classes, the two views and batch 16): ImageNet
# weights, 448 px, flip. The release's ResNet_1x1 is a 1x1 convolution on
# the last feature map, averaged: the same function as global average
# pooling and a linear layer, whose weights give the CAM (IGNOREClassifier).
_base_ = ['../models/resnet50.py', './ignore.py']

# Views (datasets.py of the release): the image (resize, flip) and its
# strong view, RandAugment(3 operations, magnitude 5 of 30) before the same
# resize and an independent flip. MMPretrain's RandAugment draws from timm's
# "increasing" operations, torchvision's (the release's) from its own list
# of 14; the magnitudes are on the same 0-30 scale.
image_view = [
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
strong_view = [
    dict(
        type='RandAugment',
        policies='timm_increasing',
        num_policies=3,
        magnitude_level=5,
        total_level=30),
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
# the training pipeline of the dataset configs (train_pipeline), with
# data_preprocessor=dict(type='MultiViewDataPreprocessor')
ignore_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiView',
        num_views=[1, 1],
        transforms=[image_view, strong_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]

model = dict(_base_.ignore_model, head=dict(loss=_base_.ignore_loss))
