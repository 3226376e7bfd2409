# LL-R, ResNet-50 on COCO 2014 (71.0 test mAP in
# the paper's Table 1). The method and its procedure:
# configs/_base_/methods/ll_r_resnet50.py.
_base_ = ['../_base_/methods/ll_r_resnet50.py', '../_base_/datasets/coco.py']

# the authors' values for COCO 2014: delta 0.4 % per epoch, Adam 1e-5
model = dict(head=dict(num_classes=80, loss=dict(rate=0.004)))

train_dataloader = dict(batch_size=16)
