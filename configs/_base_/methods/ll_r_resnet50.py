# LL-R (docs/methods/large_loss.md) on the papers' ResNet-50
# recipe (large_loss.py), for configs/ll_r/resnet50_{voc,coco,nuswide,cub}.py
# (each adds its dataset, num_classes and the authors' delta and optimizer
# for it): ImageNet weights, 448 px, flip, batch 16.
_base_ = ['../models/resnet50.py', './large_loss.py']

model = dict(
    head=dict(
        loss=dict(type='LLLoss', scheme='LL-R', rate=0.002)))
