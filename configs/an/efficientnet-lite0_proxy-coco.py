# AN (assume negative) on the COCO-like proxy
# (docs/methods/an.md),
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py', '../_base_/methods/an.py'
]

model = dict(head=dict(num_classes=80, loss=dict(type='ANLoss')))
