# OPML (docs/methods/opml.md), the one-pair loss alone (a = b = 0.5), on the
# VOC-like proxy; SGD as the OPML paper, 10 epochs,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/methods/opml.py'
]

model = dict(
    head=dict(num_classes=20, loss=dict(type='OPMLLoss', a=0.5, b=0.5)))
