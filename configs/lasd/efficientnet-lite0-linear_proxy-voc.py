# The linear regime of configs/lasd/efficientnet-lite0_proxy-voc.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py (README,
# Proxy benchmark). The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-voc_linear-f0.2_lr_search.md).
_base_ = ['./efficientnet-lite0_proxy-voc.py']

model = dict(
    backbone=dict(
        _delete_=True, type='PrecomputedFeatures', feature_dim=1280))
data_preprocessor = dict(
    _delete_=True, type='MultiViewDataPreprocessor',
    num_classes=_base_.num_classes)
# x is the image or its mirror image, x' and x'' too: the cache holds no
# other augmentation, so the consistency term compares mirror images only
cached_view = [dict(type='LoadCachedFeatures',
                    cache_file=_base_.feature_cache, flip_prob=0.5)]
train_pipeline = [
    dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[cached_view, cached_view]),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
test_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
optim_wrapper = dict(optimizer=dict(lr=0.001))
