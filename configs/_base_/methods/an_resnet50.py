# AN (assume negative, docs/methods/an.md) on the papers'
# ResNet-50 recipe (an.py), for configs/an/resnet50_{voc,coco,nuswide,cub,
# custom}.py (each adds its dataset, num_classes and, where it differs, the
# learning rate).
#
# Variants by switch: AN-LS model.head.loss.label_smoothing=0.1,
# WAN model.head.loss.unobserved_weight=wan.
_base_ = ['../models/resnet50.py', './an.py']

model = dict(head=dict(loss=dict(type='ANLoss')))
