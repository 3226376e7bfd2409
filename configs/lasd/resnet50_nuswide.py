# LASD (docs/methods/lasd.md), ResNet-50 on NUS-WIDE: leveraged asymmetric loss
# with disambiguation and consistency regularization over three views
# (50.52 mAP in the paper's Table 2). The method, the views, its schedule
# and the ablation switches: configs/_base_/methods/lasd_resnet50.py.
_base_ = [
    '../_base_/methods/lasd_resnet50.py', '../_base_/datasets/nuswide.py'
]

train_pipeline = _base_.multi_view_pipeline
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

# Table 4: lambda_pos 0.015, tau 0.95, alpha 0.15.
# Theorem 5.4 with kbar = 1.89 (dataset statistics) and K = 81:
# lambda_neg = (1 + 0.015 * 0.89) / (81 - 1.89) = 0.01281.
model = dict(
    head=dict(
        num_classes=81,
        loss=dict(
            lambda_pos=0.015, tau=0.95, avg_positives=1.89,
            num_classes=81),
        consistency=dict(alpha=0.15)))
