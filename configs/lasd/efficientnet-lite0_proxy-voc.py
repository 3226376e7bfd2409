# LASD (docs/methods/lasd.md) on the VOC-like proxy: Table 4's VOC values
# (lambda_pos = 0.1, tau = 0.9, alpha = 0.7), kbar = 1.46 and K = 20
# (Theorem 5.4),
# gammas 0 / 4, 10 epochs, the views of
# configs/_base_/methods/lasd_efficientnet_lite0.py,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/methods/lasd_efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py'
]

train_pipeline = _base_.multi_view_pipeline
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

model = dict(
    head=dict(
        num_classes=20,
        loss=dict(
            lambda_pos=0.1, tau=0.9, avg_positives=1.46,
            num_classes=20),
        consistency=dict(alpha=0.7)))
