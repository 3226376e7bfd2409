# GR loss (docs/methods/grloss.md) on the VOC-like proxy, with the paper's
# Table 6 VOC column (T = 8, q3 = 1, beta_T = (2., -2.),
# alpha_T = (0.8, 0.5))
# and the GR release's head at 10x and early stop (2 points below the best),
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/methods/grloss.py'
]

# Table 6's VOC column: beta_T = (w, b) = (2, -2)
model = dict(
    head=dict(
        num_classes=20, loss=dict(_base_.gr_loss, w=(0., 2.), b=(-2., -2.))))

train_cfg = dict(max_epochs=8)
