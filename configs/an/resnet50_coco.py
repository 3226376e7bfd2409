# AN (assume negative) baseline, ResNet-50 on COCO 2014 (64.92 test mAP
# in the EM paper's Table 1; docs/methods/an.md). The
# method and its schedule: configs/_base_/methods/an_resnet50.py.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/coco.py'
]

model = dict(head=dict(num_classes=80))
