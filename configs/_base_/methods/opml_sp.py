# OPML-SP (docs/methods.md, OPML): OPML (opml.py) with soft labels
# p * AP_k^gamma from the per-class AP after every epoch and AP-based label
# correction after epochs 3..9. The paper's zeta is lost with its formulas;
# 0.5 is the value chosen on the demo dataset (README, OPML).
_base_ = ['./opml.py']

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        # per-class AP after every epoch, for the soft labels
        warmup_epochs=1,
        # label correction after epochs 3..9
        updater=dict(
            type='OPMLLabelUpdater', zeta=0.5, correction_start_epoch=3)))
