# AEVLP (docs/methods/teacher_pseudo_labels.md) on the proxies'
# EfficientNet-Lite0 at 128 px (aevlp.py), for
# configs/aevlp/efficientnet-lite0_proxy-voc.py (which adds its dataset,
# num_classes, score file and epochs), as aevlp_resnet50.py is for the
# papers' datasets.
_base_ = ['../models/efficientnet_lite0.py', './aevlp.py']

model = dict(head=dict(loss=_base_.gpr_loss, label_bank=_base_.damp_bank))
