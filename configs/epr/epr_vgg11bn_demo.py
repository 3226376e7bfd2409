# EPR on the demo dataset (docs/methods/epr.md): VGG-11-BN from scratch,
# Adam 1e-3, batch 32, 6 epochs, as configs/an/an_vgg11bn_demo.py. k is the
# demo's average number of positives per image, 2.06, as the paper sets it
# to each dataset's average.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/epr.py'
]

model = dict(head=dict(loss=dict(type='EPRLoss', expected_positives=2.06)))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
