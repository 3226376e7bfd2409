# LL-Ct (Kim et al., "Large Loss Matters", CVPR 2022; docs/methods.md, LL-R,
# LL-Ct, LL-Cp) on the papers' ResNet-50 recipe, for
# configs/ll_ct/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes and the authors' delta and optimizer for it). From the second
# epoch the largest assumed-negative losses of each batch are taken as
# positives for the step. The release's procedure (train.py, config.py):
# ImageNet weights, 448 px, flip, batch 16, Adam with the head's learning rate
# x10, 10 epochs, training stopped once val mAP falls more than 3 points below
# its best, test on the best checkpoint.
#
# Switches, by name:
#   model.head.loss.rate=0.004                   delta, a fraction per epoch
#   default_hooks.early_stopping.max_drop=inf    train every epoch
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

model = dict(
    head=dict(
        loss=dict(type='LLLoss', scheme='LL-Ct', rate=0.002)))

optim_wrapper = dict(
    optimizer=dict(lr=1e-5),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=10)

default_hooks = dict(
    # the epoch sets the number of modified losses
    epoch_schedule=dict(type='SPMLEpochHook'),
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=3.))
