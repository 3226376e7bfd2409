# GR loss (Chen et al. 2024; docs/methods.md, GR loss): the GR release's
# procedure, Adam with the head's learning rate x10 (train.py, run_train),
# training stopped once val mAP falls more than 2 points below its best, test
# on the best checkpoint; beta and alpha move before every epoch. The loss
# (its Table 6 column) is the config's.
#
# Switches, by name:
#   default_hooks.early_stopping.max_drop=inf    train every epoch
#   model.head.loss.trainable_beta=True model.head.loss.num_classes=C
#                                                 learn beta (Table 3)
_base_ = ['../schedules/adam.py', '../default_runtime.py']

optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))

default_hooks = dict(
    # moves beta and alpha before every epoch and logs them
    epoch_schedule=dict(type='SPMLEpochHook'),
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=2.))
