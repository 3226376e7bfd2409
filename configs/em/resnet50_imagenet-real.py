# EM loss (docs/methods/em_apl.md), ResNet-50 on ImageNet-1k's single labels,
# tested on ReaL (configs/_base_/datasets/imagenet_real.py). The paper gives
# no ImageNet setting: its COCO one (alpha = 0.1, Table 6). The torchvision
# backbone was pretrained on these training images:
# model.backbone.init_cfg=None for a study from scratch.
_base_ = [
    '../_base_/methods/em_resnet50.py', '../_base_/datasets/imagenet_real.py'
]

model = dict(
    head=dict(num_classes=1000, loss=dict(type='EMLoss', alpha=0.1)))
