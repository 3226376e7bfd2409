# EM loss (docs/methods.md, EM loss) on the papers' ResNet-50 recipe, for
# configs/em/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, alpha and, for CUB, the learning rate): -log p on the observed
# positive, -alpha * H(p) on every unobserved label. The EM + APL release's
# procedure (main.py): Adam with one learning rate (1e-5; CUB 1e-4), 10
# epochs, stopped at the first epoch whose val mAP is no new best; the best
# validation epoch is tested.
#
# Switch: default_hooks.early_stopping.max_drop=inf trains every epoch.
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

model = dict(head=dict(loss=dict(type='EMLoss', alpha=0.1)))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

default_hooks = dict(early_stopping=dict(type='SPMLEarlyStoppingHook'))
