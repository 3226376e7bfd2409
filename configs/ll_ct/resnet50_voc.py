# LL-Ct, ResNet-50 on VOC 2012. The method and its procedure:
# configs/_base_/methods/ll_ct_resnet50.py.
_base_ = ['../_base_/methods/ll_ct_resnet50.py', '../_base_/datasets/voc.py']

# the authors' values for VOC 2012: delta 0.2 % per epoch, SGD 5e-3
model = dict(head=dict(num_classes=20, loss=dict(rate=0.002)))

train_dataloader = dict(batch_size=16)
# SGD at 5e-3 (momentum 0.9 and weight decay 1e-3, the release's SGD
# settings), as the authors give for VOC
optim_wrapper = dict(
    optimizer=dict(type='SGD', lr=5e-3, momentum=0.9, weight_decay=1e-3))
