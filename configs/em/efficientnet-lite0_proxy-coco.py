# EM loss (docs/methods/em_apl.md) on the COCO-like proxy: Table 6's COCO alpha = 0.1,
# 10 epochs, the EM + APL release's early stop (first epoch with no new best),
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py', '../_base_/methods/em.py'
]

model = dict(head=dict(num_classes=80, loss=dict(type='EMLoss', alpha=0.1)))
