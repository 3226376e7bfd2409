# OPML-SP (docs/methods/opml.md), ResNet-50 on VOC 2012 (89.20 mAP in the paper's
# Table II; the loss alone 87.77). The method, its schedule and the ablation
# switches of Table IV: configs/_base_/methods/opml_sp_resnet50.py.
_base_ = [
    '../_base_/methods/opml_sp_resnet50.py', '../_base_/datasets/voc.py'
]

model = dict(head=dict(num_classes=20))
