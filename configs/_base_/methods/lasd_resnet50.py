# LASD (docs/methods/lasd.md) on the papers' ResNet-50 recipe (lasd.py), for
# configs/lasd/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, its column of the paper's Table 4 and the dataset's average
# positives per image kbar).
#
# Ablation rows of the paper's Table 3, by --cfg-options switches:
#   A  none of the three (AN): configs/an/resnet50_<dataset>.py
#   B  leverage only: model.head.loss.tau=1.0 and the single-view switch
#   C  + disambiguation: the single-view switch
#   D  + consistency: the dataset config as is
# tau=1.0 makes every unobserved label a negative (p > 1 never holds). The
# single-view switch drops x', x'' and the consistency term:
#   model.head.consistency=None
#   train_dataloader.dataset.pipeline.1.num_views=[1,0]
_base_ = ['../models/resnet50.py', './lasd.py']

# Views. x is the recipe's training image (448x448, random horizontal flip,
# docs/methods/procedure.md, Training procedure); the supervised LASD term reads it.
# x' and x'' are random augmentations of x that keep its labels: a random
# resized crop of at least 70% of the area (objects of the image stay in view;
# smaller crops would cut objects out and make the consistency target wrong),
# a horizontal flip (no class here depends on handedness) and mild colour
# jitter (object classes do not depend on exact colour). CUB keeps its own
# views (configs/lasd/resnet50_cub.py).
original_view = [
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
augmented_view = [
    dict(type='RandomResizedCrop', scale=448, crop_ratio_range=(0.7, 1.)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='ColorJitter', brightness=0.2, contrast=0.2, saturation=0.2),
]
# the training pipeline of the dataset configs (train_pipeline); with
# data_preprocessor=dict(type='MultiViewDataPreprocessor') all views of a
# batch go through the backbone as one batch of 3 x batch_size images
multi_view_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[original_view, augmented_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]

# lambda_pos, tau, kbar and alpha per dataset
model = dict(
    head=dict(
        loss=_base_.lasd_loss, consistency=dict(type='ViewConsistency')))
