# AN on a custom multi-label dataset (configs/_base_/datasets/
# custom_multilabel.py): set num_classes to the number of classes of the
# annotation files, e.g. --cfg-options model.head.num_classes=5.
_base_ = [
    '../_base_/methods/an_resnet50.py',
    '../_base_/datasets/custom_multilabel.py'
]

model = dict(head=dict(num_classes=20))
