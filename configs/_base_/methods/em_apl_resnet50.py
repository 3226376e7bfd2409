# EM loss with asymmetric pseudo-labeling (docs/methods.md, EM loss and
# asymmetric pseudo-labeling) on the papers' ResNet-50 recipe, for
# configs/em_apl/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, alpha, beta, T_w and, for CUB, the learning rate). After epoch
# T_w and each later one the training set is scored and the lowest-scoring
# unobserved labels of each class become soft negative pseudo-labels in the
# head's label bank (theta = 90% of them over the remaining epochs). The
# EM + APL release's procedure (main.py): Adam with one learning rate (1e-5;
# CUB 1e-4), 10 epochs, stopped at the first epoch whose val mAP is no new
# best; the best validation epoch is tested.
#
# Switches, by name:
#   default_hooks.pseudo_label.warmup_epochs=N          T_w
#   default_hooks.pseudo_label.updater.negative_proportion=0.8   theta
#   default_hooks.early_stopping.max_drop=inf            train every epoch
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

model = dict(
    head=dict(
        loss=dict(type='EMLoss', alpha=0.1, beta=0.2),
        label_bank=dict(type='LabelBank')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        warmup_epochs=5,
        updater=dict(type='AsymmetricPseudoLabeling',
                     negative_proportion=0.9),
        # scored in eval mode on the training pipeline, as the release
        pipeline='train'),
    early_stopping=dict(type='SPMLEarlyStoppingHook'))
