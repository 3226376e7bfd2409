# IGNORE (docs/methods/ignore.md) on the COCO-like proxy at the release's
# settings (25 epochs, Adam 1e-5, classifier x10; the proxy's
# batch), fine-tuning EfficientNet-Lite0 at 128 px
# (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_coco.py). The linear regime has no IGNORE
# config: cached features have no feature map to mask.
_base_ = [
    '../_base_/methods/ignore_efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py'
]

train_pipeline = _base_.ignore_pipeline
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

model = dict(head=dict(num_classes=80))
