# GR loss on the demo dataset (SPEC 3): VGG-11-BN from scratch, Adam 1e-3,
# batch 32, 6 epochs, as configs/an/vgg11bn_demo.py.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        loss=dict(
            type='GRLoss',
            w=(0., 2.),
            b=(-2., -2.),
            mu=(0.5, 0.8),
            sigma=(2., 0.5),
            q2=0.01,
            q3=1.)))

# from scratch: one learning rate for the whole network
optim_wrapper = dict(
    optimizer=dict(lr=1e-3), paramwise_cfg=dict(_delete_=True))
train_cfg = dict(max_epochs=6)

custom_hooks = _base_.custom_hooks + [dict(type='SPMLEpochHook')]
