# AN (assume negative) baseline, ResNet-50 on CUB-200-2011 (18.31 test mAP
# in the EM paper's Table 1; docs/methods.md, AN and its variants).
# Adam, one learning rate, 10 epochs.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/cub.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(head=dict(num_classes=312, loss=dict(type='ANLoss')))

train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=5e-5))
train_cfg = dict(max_epochs=10)
