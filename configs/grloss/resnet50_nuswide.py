# GR loss (Chen et al. 2024), ResNet-50 on NUS-WIDE: 49.08 test mAP in the
# paper's Table 2. The method, its procedure and switches:
# configs/_base_/methods/grloss_resnet50.py.
_base_ = [
    '../_base_/methods/grloss_resnet50.py', '../_base_/datasets/nuswide.py'
]

# Table 6, NUS-WIDE: lr 1e-5, T = 10, beta_T = (w, b) = (10, -8), q3 = 1
model = dict(
    head=dict(
        num_classes=81))
