# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md), ResNet-50 on
# VOC 2012 (89.19 test mAP in the EM paper's Table 1). The method, its
# schedule and switches: configs/_base_/methods/em_apl_resnet50.py.
_base_ = [
    '../_base_/methods/em_apl_resnet50.py', '../_base_/datasets/voc.py'
]

# Table 6: alpha = 0.2, beta = 0.02, theta = 90%, T_w = 5
model = dict(head=dict(num_classes=20, loss=dict(alpha=0.2, beta=0.02)))

default_hooks = dict(pseudo_label=dict(warmup_epochs=5))
