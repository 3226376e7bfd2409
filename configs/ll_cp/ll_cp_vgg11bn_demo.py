# LL-Cp on the demo dataset (docs/methods.md, LL-R, LL-Ct, LL-Cp): VGG-11-BN
# from scratch, Adam 1e-3, batch 32, 6 epochs, as configs/an/an_vgg11bn_demo.py
# (the release's 10x head rate belongs to its pretrained backbone). delta is
# 0.5 % per epoch, the largest of the paper's grid: the demo misses 1.06 of
# its 2.06 positives per image, 12 % of the unobserved labels (1.2-2.5 % on
# the benchmarks). Training stops once val mAP falls more than 3 points below
# its best, as the release.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        loss=dict(type='LLLoss', scheme='LL-Cp', rate=0.005),
        label_bank=dict(type='CorrectedLabelBank')))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)

default_hooks = dict(
    # the epoch sets the number of modified losses
    epoch_schedule=dict(type='SPMLEpochHook'),
    # sizes the corrections for the training set; merges the ranks' ones
    sample_state=dict(type='SPMLSampleStateHook'),
    # switch: default_hooks.early_stopping.max_drop=inf trains every epoch
    early_stopping=dict(type='SPMLEarlyStoppingHook', max_drop=3.))
