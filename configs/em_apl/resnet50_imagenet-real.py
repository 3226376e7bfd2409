# EM + APL (docs/methods/em_apl.md), ResNet-50 on ImageNet-1k's single
# labels, tested on ReaL (configs/_base_/datasets/imagenet_real.py). The
# paper gives no ImageNet setting: its COCO one (Table 6: alpha = 0.1,
# beta = 0.9, theta = 90%, T_w = 5). The torchvision backbone was pretrained
# on these training images: model.backbone.init_cfg=None for a study from
# scratch.
_base_ = [
    '../_base_/methods/em_apl_resnet50.py',
    '../_base_/datasets/imagenet_real.py'
]

model = dict(head=dict(num_classes=1000, loss=dict(alpha=0.1, beta=0.9)))

default_hooks = dict(pseudo_label=dict(warmup_epochs=5))
