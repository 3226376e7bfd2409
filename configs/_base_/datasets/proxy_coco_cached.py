# The COCO-like proxy (proxy_coco.py) in the linear regime, read as
# proxy_voc_cached.py. Write the cache once with
#   python tools/cache_features.py configs/an/efficientnet-lite0_proxy-coco.py
_base_ = ['./proxy_coco.py', '../models/efficientnet_lite0_cached.py']

data_preprocessor = dict(
    _delete_=True, type='ClsDataPreprocessor', num_classes=_base_.num_classes)
train_dataloader = dict(dataset=dict(pipeline=_base_.cached_train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=_base_.cached_test_pipeline))
test_dataloader = val_dataloader
