# EM loss (docs/methods.md), ResNet-50 on NUS-WIDE (47.15 test mAP in the EM
# paper's Table 1). -log p on the observed positive, -alpha * H(p) on every
# unobserved label. The EM + APL release's procedure (main.py): Adam with one
# learning rate (1e-5; CUB 1e-4), batch 8 (VOC, CUB) or 16 (COCO, NUS-WIDE), 10
# epochs, stopped at the first epoch whose val mAP is no new best.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/nuswide.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

# Table 6: alpha = 0.1
model = dict(
    head=dict(num_classes=81, loss=dict(type='EMLoss', alpha=0.1)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

custom_hooks = _base_.custom_hooks + [
    # the EM + APL release stops at the first epoch whose val mAP is no new
    # best; the best validation epoch is tested
    dict(type='SPMLEarlyStoppingHook'),
]
