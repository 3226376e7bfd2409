# ImageNet-1k's single labels as real single positives, tested on ReaL
# (SPMLImageNet; docs/user_guides/datasets.md, Real single-positive data).
# data/imagenet in MMPretrain's ImageNet layout: train/<wnid>/*.JPEG (or
# meta/train.txt), val/ILSVRC2012_val_*.JPEG (meta/val.txt optional) and
# ReaL's real.json (google-research/reassessed-imagenet) in the root.
# Training observes each image's one label (no protocol draw); the val split
# (2% of the official train split: 25,623 images, instead of the protocol's
# 20%, which would validate on 256k images every epoch) validates on these
# observed labels (spml/mAP_observed); the test split is the 50,000
# validation images with ReaL's label sets, the 3,163 empty ones left out:
# spml/mAP beside ReaL's top-1 accuracy (spml/top1_real) and the label sets'
# CF1/OF1 at the head's threshold.
_base_ = ['./spml_448px.py']

dataset_type = 'SPMLImageNet'
data_root = 'data/imagenet'
num_classes = 1000
imagenet = dict(
    type=dataset_type,
    data_root=data_root,
    data_prefix='',
    real_file='real.json',
    val_frac=0.02)

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=16, dataset=imagenet)
val_dataloader = dict(dataset=imagenet)
test_dataloader = dict(dataset=imagenet)
val_evaluator = [
    dict(type='SPMLAveragePrecision'),
    dict(type='SPMLReaLAccuracy'),
]
test_evaluator = [
    dict(type='SPMLAveragePrecision'),
    dict(type='SPMLReaLAccuracy'),
    dict(type='SPMLLabelSetMetric'),
]
