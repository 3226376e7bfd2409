# ROLE (regularized online label estimation, Cole et al. 2021; docs/methods.md,
# ROLE) on the papers' ResNet-50 recipe, end to end, for
# configs/role/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, k and the learning rates). The community code's procedure, as
# AN: Adam, 10 epochs, no early stopping, the best validation epoch tested; the
# label-estimate table learns at 10x the network's learning rate with the
# release's dense Adam.
#
# Switches, by name:
#   model.head.label_bank.adam=per_row    per-row Adam of the table (needed
#                                         for distributed training)
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

model = dict(
    head=dict(
        loss=dict(type='ROLELoss'),
        label_bank=dict(type='LabelEstimateTable', lr=1e-4, adam='dense')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

default_hooks = dict(
    # sizes the table for the training set; merges the ranks' rows
    sample_state=dict(type='SPMLSampleStateHook'))
