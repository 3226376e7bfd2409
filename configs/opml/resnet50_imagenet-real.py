# OPML-SP (docs/methods/opml.md), ResNet-50 on ImageNet-1k's single labels,
# tested on ReaL (configs/_base_/datasets/imagenet_real.py). The method, its
# schedule and the ablation switches: configs/_base_/methods/
# opml_sp_resnet50.py (the values of its COCO config; the paper gives no
# ImageNet setting). The torchvision backbone was pretrained on these
# training images: model.backbone.init_cfg=None for a study from scratch.
_base_ = [
    '../_base_/methods/opml_sp_resnet50.py',
    '../_base_/datasets/imagenet_real.py'
]

model = dict(head=dict(num_classes=1000))
