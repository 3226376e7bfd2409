# ROLE on the demo dataset (docs/methods/role.md): VGG-11-BN from scratch,
# Adam 1e-3, batch 32, 6 epochs, as configs/an/an_vgg11bn_demo.py; the
# label-estimate table learns at 10x (1e-2) with the release's dense Adam. k
# is the demo's average number of positives per image, 2.06.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/role.py'
]

model = dict(
    head=dict(
        loss=dict(type='ROLELoss', expected_positives=2.06),
        label_bank=dict(type='LabelEstimateTable', lr=1e-2)))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
