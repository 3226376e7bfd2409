# OPML-SP (docs/methods/opml.md) on ResNet-50 (opml_sp.py), for
# configs/opml/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset and
# num_classes): the one-pair loss with high-rank regularization, soft labels
# p * AP_k^gamma and AP-based label correction.
#
# Ablation rows of the paper's Table IV, by --cfg-options switches:
#   loss only       model.head.loss.rank_weight=0.
#                   model.head.loss.soft_labels=False
#                   default_hooks.pseudo_label.updater.zeta=0.
#   + high-rank     model.head.loss.soft_labels=False
#                   default_hooks.pseudo_label.updater.zeta=0.
#   + smoothing     default_hooks.pseudo_label.updater.zeta=0. (soft labels,
#                   no correction)
#   + correction    the config as is
# (the first two still score the training set after each epoch, which then
# changes nothing).
_base_ = ['../models/resnet50.py', './opml_sp.py']

model = dict(head=_base_.opml_sp_head)
