# ROLE, ResNet-50 on CUB-200-2011 (13.66 test mAP as the EM paper's
# Table 1 reports it). The method and its procedure:
# configs/_base_/methods/role_resnet50.py.
_base_ = ['../_base_/methods/role_resnet50.py', '../_base_/datasets/cub.py']

# k: the average number of positives per training image; batch 8, lr 5e-5
# (as configs/an/resnet50_cub.py), the table at 10x
model = dict(
    head=dict(
        num_classes=312,
        loss=dict(expected_positives=31.4),
        label_bank=dict(lr=5e-4)))
optim_wrapper = dict(optimizer=dict(lr=5e-5))
