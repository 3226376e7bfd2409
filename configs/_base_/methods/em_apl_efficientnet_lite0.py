# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md) on the
# proxies' EfficientNet-Lite0 at 128 px (em_apl.py), for
# configs/em_apl/efficientnet-lite0_proxy-{voc,coco}.py (each adds its
# dataset, num_classes, alpha and beta), as em_apl_resnet50.py is for the
# papers' datasets.
_base_ = ['../models/efficientnet_lite0.py', './em_apl.py']

model = dict(
    head=dict(loss=dict(type='EMLoss'), label_bank=dict(type='LabelBank')))
