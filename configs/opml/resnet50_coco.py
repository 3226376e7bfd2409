# OPML-SP (docs/methods/opml.md), ResNet-50 on COCO 2014 (71.75 mAP in the paper's
# Table II; the loss alone 68.93). The method, its schedule and the ablation
# switches of Table IV: configs/_base_/methods/opml_sp_resnet50.py.
_base_ = [
    '../_base_/methods/opml_sp_resnet50.py', '../_base_/datasets/coco.py'
]

model = dict(head=dict(num_classes=80))
