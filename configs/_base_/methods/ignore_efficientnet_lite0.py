# IGNORE (docs/methods/ignore.md) on the proxies' EfficientNet-Lite0 at
# 128 px (ignore.py), for configs/ignore/efficientnet-lite0_proxy-{voc,coco}.py
# (each adds its dataset and num_classes), as ignore_resnet50.py is for the
# papers' datasets. The backbone's last 4 x 4 feature map (timm's
# global_pool='') gives the CAM.
_base_ = ['../models/efficientnet_lite0.py', './ignore.py']

# Views: the proxies' training image (a random flip) and its strong view,
# RandAugment(3 operations, magnitude 5 of 30) as in the release, then an
# independent flip.
image_view = [dict(type='RandomFlip', prob=0.5, direction='horizontal')]
strong_view = [
    dict(
        type='RandAugment',
        policies='timm_increasing',
        num_policies=3,
        magnitude_level=5,
        total_level=30),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
# the training pipeline of the proxy configs (train_pipeline), with
# data_preprocessor=dict(type='MultiViewDataPreprocessor')
ignore_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiView',
        num_views=[1, 1],
        transforms=[image_view, strong_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]

model = dict(_base_.ignore_model, head=dict(loss=_base_.ignore_loss))
