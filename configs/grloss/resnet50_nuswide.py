# GR loss (Chen et al. 2024), ResNet-50 on NUS-WIDE: 49.08 test mAP in
# the paper's Table 2. Hyperparameters from the paper's Table 6; alpha_0
# and beta_0 are the release defaults (mu, sigma) = (0.5, 2) and (w, b) =
# (0, -2).
# The GR release's procedure: ImageNet weights, 448 px, flip, Adam with the
# head's learning rate x10 (train.py, run_train), training stopped once val
# mAP falls more than 2 points below its best, test on the best checkpoint.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/nuswide.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=81,
        loss=dict(
            type='GRLoss',
            w=(0., 10.),  # beta: (w0, wT)
            b=(-2., -8.),  # beta: (b0, bT)
            mu=(0.5, 0.8),  # alpha: (mu0, muT)
            sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
            q2=0.01,
            q3=1.)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(
    optimizer=dict(lr=1e-5),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=10)

custom_hooks = _base_.custom_hooks + [
    # moves beta and alpha before every epoch and logs them
    dict(type='SPMLEpochHook'),
    dict(type='SPMLEarlyStoppingHook', max_drop=2.),
]
