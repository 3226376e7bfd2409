# The VOC-like proxy (proxy_voc.py) in the linear regime: every split reads
# the frozen backbone's features from feature_cache instead of the images,
# and the model is the one that takes them
# (models/efficientnet_lite0_cached.py: only the head trains), so a linear
# config adds only its method base.
# Write the cache once with
#   python tools/cache_features.py configs/an/efficientnet-lite0_proxy-voc.py
_base_ = ['./proxy_voc.py', '../models/efficientnet_lite0_cached.py']

data_preprocessor = dict(
    _delete_=True, type='ClsDataPreprocessor', num_classes=_base_.num_classes)
train_dataloader = dict(dataset=dict(pipeline=_base_.cached_train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
test_dataloader = val_dataloader
