# EPR (expected positive regularization, Cole et al. 2021), ResNet-50 on
# CUB-200-2011 (docs/methods.md, EPR). The community code's procedure, as
# configs/an/resnet50_cub.py: Adam, one learning rate, 10 epochs, no early
# stopping, the best validation epoch tested.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/cub.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=312,
        # k: the average number of positives per training image
        loss=dict(type='EPRLoss', expected_positives=31.4)))

train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=5e-5))
train_cfg = dict(max_epochs=10)
