# EPR, ResNet-50 on NUS-WIDE. The method and its procedure:
# configs/_base_/methods/epr_resnet50.py.
_base_ = [
    '../_base_/methods/epr_resnet50.py', '../_base_/datasets/nuswide.py'
]

# k: the average number of positives per training image; batch 16, lr 1e-5
# (as configs/an/resnet50_nuswide.py)
model = dict(head=dict(num_classes=81, loss=dict(expected_positives=1.9)))
