# LL-Ct on the demo dataset (docs/methods/large_loss.md): the LL-R demo
# (configs/ll_r/ll_r_vgg11bn_demo.py: VGG-11-BN from scratch, Adam 1e-3,
# batch 32, 6 epochs, delta 0.5 % per epoch, stopped once val mAP falls more
# than 3 points below its best, as the release) with the large losses'
# labels corrected for the batch (LL-Ct) instead of rejected, so the two
# differ only in the scheme.
_base_ = ['../ll_r/ll_r_vgg11bn_demo.py']

model = dict(head=dict(loss=dict(scheme='LL-Ct')))
