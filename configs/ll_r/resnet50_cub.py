# LL-R, ResNet-50 on CUB-200-2011 (19.5 test mAP in
# the paper's Table 1). The method and its procedure:
# configs/_base_/methods/ll_r_resnet50.py.
_base_ = ['../_base_/methods/ll_r_resnet50.py', '../_base_/datasets/cub.py']

# the authors' values for CUB-200-2011: delta 0.4 % per epoch, Adam 7.5e-5
model = dict(head=dict(num_classes=312, loss=dict(rate=0.004)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=7.5e-5))
