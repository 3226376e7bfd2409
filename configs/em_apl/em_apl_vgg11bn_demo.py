# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md) on the demo
# dataset. After epoch T_w and each later one, the whole training set is scored
# and the least likely unobserved labels of each class become soft negative
# pseudo-labels, kept in the head's label bank. Schedule of the AN demo
# (configs/an/an_vgg11bn_demo.py): from scratch, Adam 1e-3, batch 32, 6 epochs.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/em_apl.py'
]

# The demo has no row in Table 6: alpha and beta are the VOC values (VOC is
# the closest in classes and positives per image); T_w is VOC's half of the
# schedule (5 of 10 epochs there, 3 of 6 here); theta = 0.9 everywhere.
model = dict(
    head=dict(
        loss=dict(type='EMLoss', alpha=0.2, beta=0.02),
        label_bank=dict(type='LabelBank')))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)

# T_w: VOC's half of the schedule
default_hooks = dict(pseudo_label=dict(warmup_epochs=3))
