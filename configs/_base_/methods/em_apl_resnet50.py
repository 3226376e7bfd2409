# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md) on the papers'
# ResNet-50 recipe (em_apl.py), for configs/em_apl/resnet50_{voc,coco,
# nuswide,cub}.py (each adds its dataset, num_classes, alpha, beta, T_w and,
# for CUB, the release's learning rate 1e-4).
_base_ = ['../models/resnet50.py', './em_apl.py']

model = dict(
    head=dict(
        loss=dict(type='EMLoss', alpha=0.1, beta=0.2),
        label_bank=dict(type='LabelBank')))
