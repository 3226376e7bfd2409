# The linear regime of configs/opml/efficientnet-lite0-sp_proxy-voc.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py (README,
# Proxy benchmark). The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-voc_linear-f0.2_lr_search.md).
_base_ = ['./efficientnet-lite0-sp_proxy-voc.py']

model = dict(
    backbone=dict(
        _delete_=True, type='PrecomputedFeatures', feature_dim=1280))
data_preprocessor = dict(
    _delete_=True, type='ClsDataPreprocessor',
    num_classes=_base_.num_classes)
train_dataloader = dict(dataset=dict(pipeline=_base_.cached_train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
test_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
optim_wrapper = dict(optimizer=dict(lr=0.01))
