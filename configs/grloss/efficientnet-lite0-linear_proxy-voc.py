# The linear regime of configs/grloss/efficientnet-lite0_proxy-voc.py: the
# ImageNet-pretrained EfficientNet-Lite0 stays frozen and only the classifier
# trains, on the features cached once by tools/cache_features.py
# (docs/user_guides/datasets.md, cached features).
# The learning rate is the best of 1e-4 ... 1e-1 on the
# validation split of the proxy at a fifth of its size
# (docs/results/accuracy_proxy-voc_linear-f0.2_lr_search.md).
_base_ = [
    '../_base_/datasets/proxy_voc_cached.py', '../_base_/methods/grloss.py'
]

# Table 6's VOC column: beta_T = (w, b) = (2, -2)
model = dict(
    head=dict(
        num_classes=20, loss=dict(_base_.gr_loss, w=(0., 2.), b=(-2., -2.))))

train_cfg = dict(max_epochs=8)
# only the head trains: its rate is 10x this one, as in the GR release
optim_wrapper = dict(optimizer=dict(lr=0.0001))
