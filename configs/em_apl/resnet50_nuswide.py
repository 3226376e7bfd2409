# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md), ResNet-50 on
# NUS-WIDE (47.59 test mAP in the EM paper's Table 1). The method, its
# schedule and switches: configs/_base_/methods/em_apl_resnet50.py.
_base_ = [
    '../_base_/methods/em_apl_resnet50.py', '../_base_/datasets/nuswide.py'
]

# Table 6: alpha = 0.1, beta = 0.2, theta = 90%, T_w = 4
model = dict(head=dict(num_classes=81, loss=dict(alpha=0.1, beta=0.2)))

default_hooks = dict(pseudo_label=dict(warmup_epochs=4))
