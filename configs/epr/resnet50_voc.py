# EPR, ResNet-50 on VOC 2012. The method and its procedure:
# configs/_base_/methods/epr_resnet50.py.
_base_ = ['../_base_/methods/epr_resnet50.py', '../_base_/datasets/voc.py']

# k: the average number of positives per training image; batch 8, lr 1e-5
# (as configs/an/resnet50_voc.py)
model = dict(head=dict(num_classes=20, loss=dict(expected_positives=1.5)))
