# EM loss with asymmetric pseudo-labeling (docs/methods.md), ResNet-50 on COCO
# 2014 (70.87 test mAP in the EM paper's Table 1). After epoch T_w and each
# later one the training set is scored and the lowest-scoring unobserved labels
# of each class become soft negative pseudo-labels in the head's label bank.
# The EM + APL release's procedure (main.py): Adam with one learning rate
# (1e-5; CUB 1e-4), batch 8 (VOC, CUB) or 16 (COCO, NUS-WIDE), 10 epochs,
# stopped at the first epoch whose val mAP is no new best.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/coco.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

# Table 6: alpha = 0.1, beta = 0.9, theta = 90%, T_w = 5
model = dict(
    head=dict(
        num_classes=80,
        loss=dict(type='EMLoss', alpha=0.1, beta=0.9),
        label_bank=dict(type='LabelBank')))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

custom_hooks = [
    dict(type='SafeCheckpointHook'),
    dict(type='SPMLDatasetCheckHook'),
    dict(
        type='SPMLPseudoLabelHook',
        warmup_epochs=5,
        updater=dict(type='AsymmetricPseudoLabeling',
                     negative_proportion=0.9),
        # scored in eval mode on the training pipeline, as the release
        pipeline='train'),
    # the EM + APL release stops at the first epoch whose val mAP is no new
    # best; the best validation epoch is tested
    dict(type='SPMLEarlyStoppingHook'),
]
