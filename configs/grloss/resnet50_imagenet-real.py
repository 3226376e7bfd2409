# GR loss (Chen et al. 2024; docs/methods/grloss.md), ResNet-50 on
# ImageNet-1k's single labels, tested on ReaL
# (configs/_base_/datasets/imagenet_real.py). The paper gives no ImageNet
# column: its Table 6 COCO column (lr 1e-5, T = 8, beta_T = (10, -8),
# q3 = 1), as configs/grloss/resnet50_coco.py. The torchvision backbone was
# pretrained on these training images: model.backbone.init_cfg=None for a
# study from scratch.
_base_ = [
    '../_base_/methods/grloss_resnet50.py',
    '../_base_/datasets/imagenet_real.py'
]

model = dict(head=dict(num_classes=1000))

train_cfg = dict(max_epochs=8)
