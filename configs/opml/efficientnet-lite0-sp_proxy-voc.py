# OPML-SP (docs/methods.md) on the VOC-like proxy: the one-pair loss with
# high rank, soft labels and AP-based label correction after epochs 3-9, with
# the values of configs/_base_/methods/opml_sp_resnet50.py; SGD, 10 epochs,
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
    head=dict(
        num_classes=20,
        loss=dict(
            type='OPMLLoss',
            a=0.5,
            b=0.5,
            rank_weight=0.01,
            rank_delta=1e-2,
            soft_labels=True,
            gamma=1.),
        label_bank=dict(type='OPMLLabelBank')))

optim_wrapper = dict(optimizer=dict(lr=1e-3))

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        warmup_epochs=1,
        updater=dict(
            type='OPMLLabelUpdater', zeta=0.5, correction_start_epoch=3)))
