# The linear regime of configs/opml/efficientnet-lite0-sp_proxy-voc.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py
# (docs/user_guides/datasets.md, cached features).
# The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-voc_linear-f0.2_lr_search.md).
_base_ = [
    '../_base_/datasets/proxy_voc_cached.py', '../_base_/methods/opml_sp.py'
]

model = dict(head=dict(_base_.opml_sp_head, num_classes=20))
optim_wrapper = dict(optimizer=dict(lr=0.01))
