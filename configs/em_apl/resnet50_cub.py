# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md), ResNet-50 on
# CUB-200-2011 (21.84 test mAP in the EM paper's Table 1). The method, its
# schedule and switches: configs/_base_/methods/em_apl_resnet50.py.
_base_ = [
    '../_base_/methods/em_apl_resnet50.py', '../_base_/datasets/cub.py'
]

# Table 6: alpha = 0.01, beta = 0.4, theta = 90%, T_w = 3
model = dict(head=dict(num_classes=312, loss=dict(alpha=0.01, beta=0.4)))

# the EM + APL release trains CUB at 1e-4
optim_wrapper = dict(optimizer=dict(lr=1e-4))

default_hooks = dict(pseudo_label=dict(warmup_epochs=3))
