# OPML-SP (docs/methods.md, OPML) on ResNet-50 (opml_sp.py), for
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

# The paper's a, b, lambda, delta and gamma are lost with its formulas;
# these are the values chosen on the demo dataset (README, OPML), the same
# for every dataset.
model = dict(
    head=dict(
        loss=dict(
            type='OPMLLoss',
            a=0.5,
            b=0.5,
            rank_weight=0.01,
            rank_delta=1e-2,
            soft_labels=True,
            gamma=1.),
        label_bank=dict(type='OPMLLabelBank')))
