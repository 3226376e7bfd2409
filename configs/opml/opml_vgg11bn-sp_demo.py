# OPML-SP (docs/methods.md) on the demo dataset: the one-pair loss with
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
_base_ = ['./opml_vgg11bn_demo.py']

model = dict(
    head=dict(
        loss=dict(
            type='OPMLLoss',
            a=0.5,
            b=0.5,
            rank_weight=0.01,
            rank_delta=1e-2,
            soft_labels=True,
            gamma=1.),
        label_bank=dict(type='OPMLLabelBank')))

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        # AP after every epoch, for the soft labels
        warmup_epochs=1,
        updater=dict(
            type='OPMLLabelUpdater', zeta=0.5, correction_start_epoch=2)))
