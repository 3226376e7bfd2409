# VLPL (docs/methods/teacher_pseudo_labels.md) on the papers' ResNet-50
# recipe (vlpl.py), for configs/vlpl/resnet50_{voc,coco,nuswide,cub}.py (each
# adds its dataset, num_classes, score file, alpha and, for CUB, the
# release's learning rate 1e-4): ImageNet weights, 448 px, flip.
_base_ = ['../models/resnet50.py', './vlpl.py']

model = dict(head=dict(loss=_base_.vlpl_loss, label_bank=_base_.vlpl_bank))
