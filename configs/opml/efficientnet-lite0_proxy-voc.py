# OPML (docs/methods.md), the one-pair loss alone (a = b = 0.5), on the
# VOC-like proxy; SGD as the OPML paper, 10 epochs,
# fine-tuning EfficientNet-Lite0 from its ImageNet weights at 128 px (README,
# Proxy benchmark). The learning rate is the papers' pretrained-network value
# for the optimizer; it was not searched on the proxy. ResNet-50 at 448 px:
# '../_base_/models/resnet50.py' as the model base, a Resize to 448 and
# ImageNet normalization (configs/_base_/datasets/spml_448px.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/schedules/sgd.py',
    '../_base_/default_runtime.py'
]

model = dict(
    head=dict(num_classes=20, loss=dict(type='OPMLLoss', a=0.5, b=0.5)))

optim_wrapper = dict(optimizer=dict(lr=1e-3))
