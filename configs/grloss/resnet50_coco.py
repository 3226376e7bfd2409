# GR loss (Chen et al. 2024), ResNet-50 on COCO 2014: 73.17 test mAP in the
# paper's Table 2. The method, its procedure and switches:
# configs/_base_/methods/grloss_resnet50.py.
_base_ = [
    '../_base_/methods/grloss_resnet50.py', '../_base_/datasets/coco.py'
]

# Table 6, COCO 2014: lr 1e-5, T = 8, beta_T = (w, b) = (10, -8), q3 = 1
model = dict(
    head=dict(
        num_classes=80))

train_cfg = dict(max_epochs=8)
