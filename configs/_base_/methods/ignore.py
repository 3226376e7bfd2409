# IGNORE (Song et al., ECCV 2024; docs/methods/ignore.md): the release's
# ResNet-50 procedure (train_resnet.py, config.py): Adam at 1e-5 without
# weight decay, the classifier at 10x (--lr_mult), 25 epochs, batch 16, the
# best validation epoch tested (no early stop). Each step runs the backbone
# on the image, its strong view and the image masked to the observed
# positive's CAM: model.type='IGNOREClassifier' (set by the *_resnet50.py,
# *_efficientnet_lite0.py bases and the demo) with a two-view pipeline
# (ignore_views below) and MultiViewDataPreprocessor.
#
# Switches, by name (the release's flags):
#   model.head.loss.ignore=False       plain AN on the strong view (--ignore)
#   model.head.loss.lat=False          gap threshold only (--lat)
#   model.head.loss.strong_aug=False   AN loss on the image (--strong_aug)
#   model.head.loss.reg=False          no consistency term (--reg)
#   model.head.loss.spbc_weight=0.     no single-positive BCE (--spbc)
#   model.cam_norm='image'             per-image CAM scaling (the release
#                                      scales over the batch)
_base_ = ['../schedules/adam.py', '../default_runtime.py']

# the release parser's defaults (config.py); the README's ResNet-50 VOC run
# sets spbc_weight=0.1, which the VOC config does
ignore_loss = dict(
    type='IGNORELoss',
    spbc_weight=0.5,
    ignore_weight=1.,
    reg_weight=0.5,
    warm_up=3,
    gap_lambda=0.999,
    avg_lambda=0.999,
    lat=True,
    strong_aug=True,
    ignore=True,
    reg=True)
ignore_model = dict(type='IGNOREClassifier', cam_threshold=0.8,
                    cam_norm='batch')

optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))
train_cfg = dict(max_epochs=25)

default_hooks = dict(
    # ends the warm-up (warm_up epochs without rejection)
    epoch_schedule=dict(type='SPMLEpochHook'))
custom_hooks = _base_.custom_hooks + [
    # two views and the multi-view preprocessor
    dict(type='MultiViewCheckHook'),
]
