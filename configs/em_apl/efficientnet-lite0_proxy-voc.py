# EM + APL (docs/methods/em_apl.md) on the VOC-like proxy: Table 6's VOC values
# (alpha = 0.2, beta = 0.02, T_w = 5 of 10 epochs, theta = 0.9), scored on the
# training pipeline and stopped at the first epoch with no new best as the
# release,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/methods/em_apl_efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py'
]

model = dict(head=dict(num_classes=20, loss=dict(alpha=0.2, beta=0.02)))
