# LL-R, LL-Ct and LL-Cp (Kim et al., "Large Loss Matters", CVPR 2022;
# docs/methods/large_loss.md): from the second epoch the largest
# assumed-negative losses of each batch are rejected (LL-R) or taken as
# positives for the step (LL-Ct) or for good (LL-Cp). The release's procedure
# (train.py, config.py): Adam with the head's learning rate x10, 10 epochs,
# training stopped once val mAP falls more than 3 points below its best, test
# on the best checkpoint. The loss (scheme, delta) is the config's.
#
# Switches, by name:
#   model.head.loss.rate=0.004                   delta, a fraction per epoch
#   default_hooks.early_stopping.max_drop=inf    train every epoch
_base_ = ['../schedules/adam.py', '../default_runtime.py']

optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))

default_hooks = dict(
    # the epoch sets the number of modified losses
    epoch_schedule=dict(type='SPMLEpochHook'),
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=3.))
