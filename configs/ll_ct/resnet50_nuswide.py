# LL-Ct, ResNet-50 on NUS-WIDE. The method and its procedure:
# configs/_base_/methods/ll_ct_resnet50.py.
_base_ = [
    '../_base_/methods/ll_ct_resnet50.py', '../_base_/datasets/nuswide.py'
]

# the authors' values for NUS-WIDE: delta 0.2 % per epoch, Adam 1e-5
model = dict(head=dict(num_classes=81, loss=dict(rate=0.002)))

train_dataloader = dict(batch_size=16)
