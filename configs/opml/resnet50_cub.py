# OPML-SP (docs/methods/opml.md), ResNet-50 on CUB-200-2011 (24.11 mAP in the
# paper's Table II; the loss alone 22.30). The method, its schedule and the
# ablation switches of Table IV: configs/_base_/methods/opml_sp_resnet50.py.
_base_ = [
    '../_base_/methods/opml_sp_resnet50.py', '../_base_/datasets/cub.py'
]

model = dict(head=dict(num_classes=312))
