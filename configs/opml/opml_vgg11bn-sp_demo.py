# OPML-SP (docs/methods/opml.md) on the demo dataset: the one-pair loss with
# high-rank regularization, soft labels p * AP_k^gamma and AP-based label
# correction. Schedule of configs/opml/opml_vgg11bn_demo.py.
#
# Ablation rows of the paper's Table IV, by config or --cfg-options switch:
#   loss only          configs/opml/opml_vgg11bn_demo.py
#   + high-rank        configs/opml/opml_vgg11bn_demo.py with
#                      model.head.loss.rank_weight=0.01
#   + smoothing        this config with
#                      default_hooks.pseudo_label.updater.zeta=0.
#                      (soft labels, no correction)
#   + correction       this config as is
# After every epoch the hook scores the training set (eval mode, test
# pipeline); the updater stores each class's AP against the observed labels in
# the head's label bank (read by the soft labels of the next epoch) and, from
# correction_start_epoch on, turns the floor(zeta * N_k * (1 - AP_k))
# highest-scoring unobserved entries of class k into persistent positives.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/opml_sp.py'
]

model = dict(head=_base_.opml_sp_head)

# label correction after epochs 2..6
default_hooks = dict(
    pseudo_label=dict(updater=dict(correction_start_epoch=2)))

# the schedule of opml_vgg11bn_demo.py: from scratch, Adam 1e-3, 6 epochs
optim_wrapper = dict(
    _delete_=True, optimizer=dict(type='Adam', lr=1e-3, weight_decay=0.))
train_cfg = dict(max_epochs=6)
