# EM loss (docs/methods.md) on the demo dataset: -log p on the observed
# positive and -alpha * H(p) on every unobserved label. Schedule of the AN demo
# (configs/an/an_vgg11bn_demo.py): from scratch, Adam 1e-3, batch 32, 6 epochs,
# so the two compare directly.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

# The demo has no row in Table 6: alpha is the VOC value (VOC is the closest
# in classes and positives per image).
model = dict(head=dict(loss=dict(type='EMLoss', alpha=0.2)))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)

default_hooks = dict(
    # the EM + APL release stops at the first epoch whose val mAP is no new
    # best; the best validation epoch is tested (switch:
    # default_hooks.early_stopping.max_drop=inf trains every epoch)
    early_stopping=dict(type='SPMLEarlyStoppingHook'))
