# EM loss (docs/methods/em_apl.md), ResNet-50 on COCO 2014 (70.70 test mAP in the EM
# paper's Table 1). The method, its schedule and switches:
# configs/_base_/methods/em_resnet50.py.
_base_ = [
    '../_base_/methods/em_resnet50.py', '../_base_/datasets/coco.py'
]

# Table 6: alpha = 0.1
model = dict(
    head=dict(num_classes=80, loss=dict(type='EMLoss', alpha=0.1)))
