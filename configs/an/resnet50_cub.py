# AN (assume negative) baseline, ResNet-50 on CUB-200-2011 (18.31 test mAP
# in the EM paper's Table 1; docs/methods/an.md). The
# method and its schedule: configs/_base_/methods/an_resnet50.py.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/cub.py'
]

model = dict(head=dict(num_classes=312))

# searched in the papers' grid; 1e-5 elsewhere
optim_wrapper = dict(optimizer=dict(lr=5e-5))
