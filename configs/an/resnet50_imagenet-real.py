# AN (assume negative, docs/methods/an.md), ResNet-50 on ImageNet-1k's single
# labels, tested on ReaL (configs/_base_/datasets/imagenet_real.py). The
# method and its schedule, COCO's (batch 16, lr 1e-5, 10 epochs):
# configs/_base_/methods/an_resnet50.py. Verelst et al. (WACV 2023) train
# SPML methods on ImageNet-1K and test on ReaL; their schedule is not
# carried here. The torchvision backbone was pretrained on these training
# images (with their single labels): set model.backbone.init_cfg=None for
# a study from scratch.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/imagenet_real.py'
]

model = dict(head=dict(num_classes=1000))
