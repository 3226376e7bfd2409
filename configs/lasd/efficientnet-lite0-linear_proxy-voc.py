# The linear regime of configs/lasd/efficientnet-lite0_proxy-voc.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py
# (docs/user_guides/datasets.md, cached features).
# The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-voc_linear-f0.2_lr_search.md).
_base_ = [
    '../_base_/datasets/proxy_voc_cached.py', '../_base_/methods/lasd.py'
]

data_preprocessor = dict(type='MultiViewDataPreprocessor')
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

model = dict(
    head=dict(
        num_classes=20,
        loss=dict(
            _base_.lasd_loss, lambda_pos=0.1, tau=0.9, avg_positives=1.46,
            num_classes=20),
        consistency=dict(type='ViewConsistency', alpha=0.7)))
optim_wrapper = dict(optimizer=dict(lr=0.001))
