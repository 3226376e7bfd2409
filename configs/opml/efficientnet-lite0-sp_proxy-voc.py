# OPML-SP (docs/methods/opml.md) on the VOC-like proxy: the one-pair loss with
# high rank, soft labels and AP-based label correction after epochs 3-9, with
# the values of configs/_base_/methods/opml_sp.py (opml_sp_head); SGD, 10
# epochs, fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/methods/opml_sp.py'
]

model = dict(head=dict(_base_.opml_sp_head, num_classes=20))
