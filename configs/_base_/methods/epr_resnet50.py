# EPR (docs/methods/epr.md) on the papers' ResNet-50 recipe (epr.py), for
# configs/epr/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, k and the community code's learning rate and batch).
_base_ = ['../models/resnet50.py', './epr.py']

model = dict(head=dict(loss=dict(type='EPRLoss')))
