# AN (assume negative) baseline on the demo dataset: every unobserved label is
# a negative (docs/methods/an.md). From scratch, Adam 1e-3,
# batch 32, 6 epochs.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/an.py'
]

model = dict(head=dict(loss=dict(type='ANLoss')))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
