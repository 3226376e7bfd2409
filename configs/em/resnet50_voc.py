# EM loss (docs/methods/em_apl.md), ResNet-50 on VOC 2012 (89.09 test mAP in the EM
# paper's Table 1). The method, its schedule and switches:
# configs/_base_/methods/em_resnet50.py.
_base_ = [
    '../_base_/methods/em_resnet50.py', '../_base_/datasets/voc.py'
]

# Table 6: alpha = 0.2
model = dict(
    head=dict(num_classes=20, loss=dict(type='EMLoss', alpha=0.2)))
