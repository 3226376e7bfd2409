# LASD (docs/methods/lasd.md) on the COCO-like proxy: Table 4's COCO values
# (lambda_pos = 0.03, tau = 0.9, alpha = 0.1), kbar = 2.94 and K = 80
# (Theorem 5.4),
# gammas 0 / 4, 10 epochs, the views of
# configs/_base_/methods/lasd_efficientnet_lite0.py,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md, proxy benchmarks;
# configs/_base_/datasets/proxy_voc.py).
_base_ = [
    '../_base_/methods/lasd_efficientnet_lite0.py',
    '../_base_/datasets/proxy_coco.py'
]

train_pipeline = _base_.multi_view_pipeline
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

model = dict(
    head=dict(
        num_classes=80,
        loss=dict(
            lambda_pos=0.03, tau=0.9, avg_positives=2.94,
            num_classes=80),
        consistency=dict(alpha=0.1)))
