# LL-Ct (Kim et al., "Large Loss Matters", CVPR 2022), ResNet-50 on VOC 2012.
# The largest assumed-negative losses of each batch are corrected to positives
# for the step (docs/methods.md, LL-R, LL-Ct, LL-Cp). delta and the optimizer
# are the authors' published values for VOC 2012: delta 0.2 % per epoch, SGD
# at 5e-3 (momentum 0.9 and weight decay 1e-3 as the release's SGD option).
# The release's procedure (train.py, config.py): ImageNet weights, 448 px,
# flip, batch 16, the head's learning rate x10, 10 epochs, training stopped
# once val mAP falls more than 3 points below its best, test on the best
# checkpoint.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/voc.py',
    '../_base_/schedules/sgd.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=20,
        loss=dict(type='LLLoss', scheme='LL-Ct', rate=0.002)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(
    optimizer=dict(lr=5e-3, momentum=0.9, weight_decay=1e-3),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=10)

custom_hooks = _base_.custom_hooks + [
    # the epoch sets the number of modified losses
    dict(type='SPMLEpochHook'),
    dict(type='SPMLEarlyStoppingHook', max_drop=3.),
]
