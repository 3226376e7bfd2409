# ROLE, ResNet-50 on VOC 2012 (87.77 test mAP as the EM paper's
# Table 1 reports it). The method and its procedure:
# configs/_base_/methods/role_resnet50.py.
_base_ = ['../_base_/methods/role_resnet50.py', '../_base_/datasets/voc.py']

# k: the average number of positives per training image; batch 8, lr 1e-5
# (as configs/an/resnet50_voc.py), the table at 10x
model = dict(
    head=dict(
        num_classes=20,
        loss=dict(expected_positives=1.5)))
