# LL-Ct (Kim et al., "Large Loss Matters", CVPR 2022), ResNet-50 on
# CUB-200-2011. The largest assumed-negative losses of each batch are
# corrected to positives for the step (docs/methods.md, LL-R, LL-Ct, LL-Cp).
# delta and the optimizer are the authors' published values for CUB-200-2011:
# delta 0.4 % per epoch, Adam at 7.5e-5. The release's procedure (train.py,
# config.py): ImageNet weights, 448 px, flip, batch 16, the head's learning
# rate x10, 10 epochs, training stopped once val mAP falls more than 3 points
# below its best, test on the best checkpoint.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/cub.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=312,
        loss=dict(type='LLLoss', scheme='LL-Ct', rate=0.004)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(
    optimizer=dict(lr=7.5e-5),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=10)

custom_hooks = _base_.custom_hooks + [
    # the epoch sets the number of modified losses
    dict(type='SPMLEpochHook'),
    dict(type='SPMLEarlyStoppingHook', max_drop=3.),
]
