# AN (assume negative) baseline, ResNet-50 on NUS-WIDE (42.27 test mAP
# in the EM paper's Table 1; docs/methods/an.md). The
# method and its schedule: configs/_base_/methods/an_resnet50.py.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/nuswide.py'
]

model = dict(head=dict(num_classes=81))
