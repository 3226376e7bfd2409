# AEVLP (docs/methods/teacher_pseudo_labels.md) on the papers' ResNet-50
# recipe (aevlp.py), for configs/aevlp/resnet50_{voc,coco,nuswide,cub}.py
# (each adds its dataset, num_classes, score file and its column of the
# release's configs/*.json): ImageNet weights, 448 px, flip.
_base_ = ['../models/resnet50.py', './aevlp.py']

model = dict(head=dict(loss=_base_.gpr_loss, label_bank=_base_.damp_bank))
