# OPML (docs/methods/opml.md) on the demo dataset, the loss alone (Table IV's first
# row): the one-pair loss on the observed single positive, no high-rank term,
# no soft labels, no label correction.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

# alpha = a / (1 - a), beta = b / (1 - b); a = b = 0.5 is ZLPR.
model = dict(head=dict(loss=dict(type='OPMLLoss', a=0.5, b=0.5)))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
