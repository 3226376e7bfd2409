# The linear regime of configs/em/efficientnet-lite0_proxy-coco.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py
# (docs/user_guides/datasets.md, cached features).
# The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-coco_linear-f0.2_lr_search.md).
_base_ = ['../_base_/datasets/proxy_coco_cached.py', '../_base_/methods/em.py']

model = dict(head=dict(num_classes=80, loss=dict(type='EMLoss', alpha=0.1)))
optim_wrapper = dict(optimizer=dict(lr=0.001))
