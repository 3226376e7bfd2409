# EPR, ResNet-50 on CUB-200-2011. The method and its procedure:
# configs/_base_/methods/epr_resnet50.py.
_base_ = ['../_base_/methods/epr_resnet50.py', '../_base_/datasets/cub.py']

# k: the average number of positives per training image; batch 8, lr 5e-5
# (as configs/an/resnet50_cub.py)
model = dict(head=dict(num_classes=312, loss=dict(expected_positives=31.4)))
optim_wrapper = dict(optimizer=dict(lr=5e-5))
