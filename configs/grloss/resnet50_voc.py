# GR loss (Chen et al. 2024), ResNet-50 on VOC 2012: 89.83 test mAP in the
# paper's Table 2. The method, its procedure and switches:
# configs/_base_/methods/grloss_resnet50.py.
_base_ = [
    '../_base_/methods/grloss_resnet50.py', '../_base_/datasets/voc.py'
]

# Table 6, VOC 2012: lr 1e-5, T = 8, beta_T = (w, b) = (2, -2), q3 = 1
model = dict(
    head=dict(
        num_classes=20,
        loss=dict(w=(0., 2.), b=(-2., -2.))))

train_cfg = dict(max_epochs=8)
