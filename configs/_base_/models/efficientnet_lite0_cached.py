# The linear regime of EfficientNet-Lite0 (efficientnet_lite0.py): the
# ImageNet-pretrained backbone stays frozen and is read once, so the model
# takes its cached 1280 pooled features (LoadCachedFeatures, the cached
# pipelines of configs/_base_/datasets/proxy_*_cached.py, which inherit this
# model) and only the head trains.
_base_ = ['./efficientnet_lite0.py']

model = dict(
    backbone=dict(
        _delete_=True, type='PrecomputedFeatures', feature_dim=1280))
