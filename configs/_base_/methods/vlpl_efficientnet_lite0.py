# VLPL (docs/methods/teacher_pseudo_labels.md) on the proxies'
# EfficientNet-Lite0 at 128 px (vlpl.py), for
# configs/vlpl/efficientnet-lite0_proxy-voc.py (which adds its dataset,
# num_classes and score file), as vlpl_resnet50.py is for the papers'
# datasets.
_base_ = ['../models/efficientnet_lite0.py', './vlpl.py']

model = dict(head=dict(loss=_base_.vlpl_loss, label_bank=_base_.vlpl_bank))
