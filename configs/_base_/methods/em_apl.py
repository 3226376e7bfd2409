# EM loss with asymmetric pseudo-labeling (docs/methods/em_apl.md, EM loss and
# asymmetric pseudo-labeling): after epoch T_w and each later one the
# training set is scored and the lowest-scoring unobserved labels of each
# class become soft negative pseudo-labels in the head's label bank (theta =
# 90% of them over the remaining epochs, Table 6). The EM + APL release's
# procedure (main.py): Adam with one learning rate, stopped at the first
# epoch whose val mAP is no new best; the best validation epoch is tested.
# The loss (alpha, beta) and T_w are the config's.
#
# Switches, by name:
#   default_hooks.pseudo_label.warmup_epochs=N          T_w
#   default_hooks.pseudo_label.updater.negative_proportion=0.8   theta
#   default_hooks.early_stopping.max_drop=inf            train every epoch
_base_ = ['./em.py']

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        warmup_epochs=5,
        updater=dict(type='AsymmetricPseudoLabeling',
                     negative_proportion=0.9),
        # scored in eval mode on the training pipeline, as the release
        pipeline='train'))
