# EM loss (docs/methods/em_apl.md) on the demo dataset: -log p on the observed
# positive and -alpha * H(p) on every unobserved label. Schedule of the AN demo
# (configs/an/an_vgg11bn_demo.py): from scratch, Adam 1e-3, batch 32, 6 epochs,
# so the two compare directly.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/em.py'
]

# The demo has no row in Table 6: alpha is the VOC value (VOC is the closest
# in classes and positives per image).
model = dict(head=dict(loss=dict(type='EMLoss', alpha=0.2)))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
