# ROLE (regularized online label estimation, Cole et al. 2021), ResNet-50 on
# NUS-WIDE, end to end (41.63 test mAP reported in the EM paper's
# Table 1; docs/methods.md, ROLE). The community code's procedure, as
# configs/an/resnet50_nuswide.py: Adam, 10 epochs, no early stopping, the best
# validation epoch tested; the label-estimate table learns at 10x the
# network's learning rate with the release's dense Adam (one process; set
# adam='per_row' for distributed training).
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/nuswide.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=81,
        # k: the average number of positives per training image
        loss=dict(type='ROLELoss', expected_positives=1.9),
        label_bank=dict(type='LabelEstimateTable', lr=0.0001)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-05))
train_cfg = dict(max_epochs=10)

custom_hooks = _base_.custom_hooks + [
    # sizes the table for the training set; merges the ranks' rows
    dict(type='SPMLSampleStateHook'),
]
