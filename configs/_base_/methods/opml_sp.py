# OPML-SP (docs/methods/opml.md): OPML (opml.py) with soft labels
# p * AP_k^gamma from the per-class AP after every epoch and AP-based label
# correction after epochs 3..9. The paper's zeta is lost with its formulas;
# 0.5 is the value chosen on the demo dataset (docs/methods/opml.md).
_base_ = ['./opml.py']

# The head's loss and label bank (model.head=opml_sp_head): the soft labels
# read each class's AP from the bank. The paper's a, b, lambda, delta and
# gamma are lost with its formulas; these are the values chosen on the demo
# dataset (docs/methods/opml.md), the same for every dataset.
opml_sp_head = dict(
    loss=dict(
        type='OPMLLoss',
        a=0.5,
        b=0.5,
        rank_weight=0.01,
        rank_delta=1e-2,
        soft_labels=True,
        gamma=1.),
    label_bank=dict(type='OPMLLabelBank'))

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        # per-class AP after every epoch, for the soft labels
        warmup_epochs=1,
        # label correction after epochs 3..9
        updater=dict(
            type='OPMLLabelUpdater', zeta=0.5, correction_start_epoch=3)))
