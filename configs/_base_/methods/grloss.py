# GR loss (Chen et al. 2024; docs/methods/grloss.md): the GR release's
# procedure, Adam with the head's learning rate x10 (train.py, run_train),
# training stopped once val mAP falls more than 2 points below its best, test
# on the best checkpoint; beta and alpha move before every epoch. gr_loss is
# the loss with Table 6's COCO column; a config sets
# model.head.loss=gr_loss and changes what its dataset's column changes.
#
# Switches, by name:
#   default_hooks.early_stopping.max_drop=inf    train every epoch
#   model.head.loss.trainable_beta=True model.head.loss.num_classes=C
#                                                 learn beta (Table 3)
_base_ = ['../schedules/adam.py', '../default_runtime.py']

# alpha_0 and beta_0 are the release defaults (mu, sigma) = (0.5, 2) and
# (w, b) = (0, -2); alpha_T = (0.8, 0.5) everywhere
gr_loss = dict(
    type='GRLoss',
    w=(0., 10.),  # beta: (w0, wT)
    b=(-2., -8.),  # beta: (b0, bT)
    mu=(0.5, 0.8),  # alpha: (mu0, muT)
    sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
    q2=0.01,
    q3=1.)

optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))

default_hooks = dict(
    # moves beta and alpha before every epoch and logs them
    epoch_schedule=dict(type='SPMLEpochHook'),
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=2.))
