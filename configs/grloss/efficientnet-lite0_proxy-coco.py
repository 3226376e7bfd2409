# GR loss (docs/methods/grloss.md) on the COCO-like proxy, with the paper's
# Table 6 COCO column (T = 8, q3 = 1, beta_T = (10., -8.),
# alpha_T = (0.8, 0.5))
# and the GR release's head at 10x and early stop (2 points below the best),
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py', '../_base_/methods/grloss.py'
]

model = dict(head=dict(num_classes=80, loss=_base_.gr_loss))

train_cfg = dict(max_epochs=8)
