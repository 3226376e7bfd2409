# GR loss (docs/methods.md, GR loss) on the COCO-like proxy, with the paper's
# Table 6 COCO column (T = 8, q3 = 1, beta_T = (10., -8.),
# alpha_T = (0.8, 0.5))
# and the GR release's head at 10x and early stop (2 points below the best),
# fine-tuning EfficientNet-Lite0 from its ImageNet weights at 128 px (README,
# Proxy benchmark). The learning rate is the papers' pretrained-network value
# for the optimizer; it was not searched on the proxy. ResNet-50 at 448 px:
# '../_base_/models/resnet50.py' as the model base, a Resize to 448 and
# ImageNet normalization (configs/_base_/datasets/spml_448px.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py', '../_base_/schedules/adam.py',
    '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=80,
        loss=dict(
            type='GRLoss',
            w=(0., 10.),  # beta: (w0, wT)
            b=(-2., -8.),  # beta: (b0, bT)
            mu=(0.5, 0.8),  # alpha: (mu0, muT)
            sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
            q2=0.01,
            q3=1.)))

optim_wrapper = dict(
    optimizer=dict(lr=1e-5),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=8)

default_hooks = dict(
    # moves beta and alpha before every epoch and logs them
    epoch_schedule=dict(type='SPMLEpochHook'),
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=2.))
