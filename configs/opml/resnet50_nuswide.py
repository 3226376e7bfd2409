# OPML-SP (docs/methods/opml.md), ResNet-50 on NUS-WIDE (50.14 mAP in the paper's
# Table II; the loss alone 47.93). The method, its schedule and the ablation
# switches of Table IV: configs/_base_/methods/opml_sp_resnet50.py.
_base_ = [
    '../_base_/methods/opml_sp_resnet50.py', '../_base_/datasets/nuswide.py'
]

model = dict(head=dict(num_classes=81))
