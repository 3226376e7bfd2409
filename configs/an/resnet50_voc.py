# AN (assume negative) baseline, ResNet-50 on VOC 2012 (85.89 test mAP
# in the EM paper's Table 1; docs/methods.md, AN and its variants).
# Adam, one learning rate, 10 epochs.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/voc.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(head=dict(num_classes=20, loss=dict(type='ANLoss')))

train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)
