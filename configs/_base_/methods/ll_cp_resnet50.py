# LL-Cp (docs/methods/large_loss.md) on the papers' ResNet-50
# recipe (ll_cp.py), for configs/ll_cp/resnet50_{voc,coco,nuswide,cub}.py
# (each adds its dataset, num_classes and the authors' delta and optimizer
# for it): ImageNet weights, 448 px, flip, batch 16.
_base_ = ['../models/resnet50.py', './ll_cp.py']

model = dict(
    head=dict(
        loss=dict(type='LLLoss', scheme='LL-Cp', rate=0.002),
        label_bank=dict(type='CorrectedLabelBank')))
