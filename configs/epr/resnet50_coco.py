# EPR, ResNet-50 on COCO 2014. The method and its procedure:
# configs/_base_/methods/epr_resnet50.py.
_base_ = ['../_base_/methods/epr_resnet50.py', '../_base_/datasets/coco.py']

# k: the average number of positives per training image; batch 16, lr 1e-5
# (as configs/an/resnet50_coco.py)
model = dict(head=dict(num_classes=80, loss=dict(expected_positives=2.9)))
