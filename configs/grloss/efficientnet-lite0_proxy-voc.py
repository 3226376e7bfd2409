# GR loss (docs/methods.md, GR loss) on the VOC-like proxy, with the paper's
# Table 6 VOC column (T = 8, q3 = 1, beta_T = (2., -2.),
# alpha_T = (0.8, 0.5))
# and the GR release's head at 10x and early stop (2 points below the best),
# fine-tuning EfficientNet-Lite0 at 128 px (README, Proxy benchmark;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/methods/grloss.py'
]

model = dict(
    head=dict(
        num_classes=20,
        loss=dict(
            type='GRLoss',
            w=(0., 2.),  # beta: (w0, wT)
            b=(-2., -2.),  # beta: (b0, bT)
            mu=(0.5, 0.8),  # alpha: (mu0, muT)
            sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
            q2=0.01,
            q3=1.)))

train_cfg = dict(max_epochs=8)
