# GR loss (Chen et al. 2024), ResNet-50 on CUB-200-2011: 21.64 test mAP in the
# paper's Table 2. The method, its procedure and switches:
# configs/_base_/methods/grloss_resnet50.py.
_base_ = [
    '../_base_/methods/grloss_resnet50.py', '../_base_/datasets/cub.py'
]

# Table 6, CUB-200-2011: lr 5e-5, T = 10, beta_T = (w, b) = (10, -8), q3 = 1.5
model = dict(
    head=dict(
        num_classes=312,
        loss=dict(q3=1.5)))

optim_wrapper = dict(optimizer=dict(lr=5e-5))
