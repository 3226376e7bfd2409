# Partial-BCE (Durand et al., CVPR 2019; docs/methods/partial_labels.md) on
# Open Images-style verified positives and negatives
# (configs/_base_/datasets/open_images.py): BCE over the known labels only,
# each image weighted by its share of known labels, with the AN recipe
# (configs/_base_/methods/an_resnet50.py). Set num_classes to the rows of
# the class file.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/open_images.py'
]

model = dict(
    head=dict(
        num_classes=601,
        loss=dict(type='PartialBCELoss', gamma=1., scale_at_tenth=5.)))
