# EPR (expected positive regularization, Cole et al. 2021), ResNet-50 on
# NUS-WIDE (docs/methods.md, EPR). The community code's procedure, as
# configs/an/resnet50_nuswide.py: Adam, one learning rate, 10 epochs, no early
# stopping, the best validation epoch tested.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/nuswide.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=81,
        # k: the average number of positives per training image
        loss=dict(type='EPRLoss', expected_positives=1.9)))

train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)
