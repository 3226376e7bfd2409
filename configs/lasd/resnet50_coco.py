# LASD (docs/methods/lasd.md), ResNet-50 on COCO 2014: leveraged asymmetric loss
# with disambiguation and consistency regularization over three views
# (72.22 mAP in the paper's Table 2). The method, the views, its schedule
# and the ablation switches: configs/_base_/methods/lasd_resnet50.py.
_base_ = [
    '../_base_/methods/lasd_resnet50.py', '../_base_/datasets/coco.py'
]

train_pipeline = _base_.multi_view_pipeline
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

# Table 4: lambda_pos 0.03, tau 0.9, alpha 0.1.
# Theorem 5.4 with kbar = 2.94 (dataset statistics) and K = 80:
# lambda_neg = (1 + 0.03 * 1.94) / (80 - 2.94) = 0.01373.
model = dict(
    head=dict(
        num_classes=80,
        loss=dict(
            lambda_pos=0.03, tau=0.9, avg_positives=2.94,
            num_classes=80),
        consistency=dict(alpha=0.1)))
