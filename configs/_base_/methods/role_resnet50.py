# ROLE (docs/methods/role.md) on the papers' ResNet-50 recipe (role.py), end
# to end, for configs/role/resnet50_{voc,coco,nuswide,cub}.py (each adds its
# dataset, num_classes, k and the learning rates). The label-estimate table
# learns at 10x the network's learning rate with the release's dense Adam.
#
# Switches, by name:
#   model.head.label_bank.adam=per_row    per-row Adam of the table (needed
#                                         for distributed training)
_base_ = ['../models/resnet50.py', './role.py']

model = dict(
    head=dict(
        loss=dict(type='ROLELoss'),
        label_bank=dict(type='LabelEstimateTable', lr=1e-4, adam='dense')))
