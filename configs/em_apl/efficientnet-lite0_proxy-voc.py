# EM + APL (docs/methods.md) on the VOC-like proxy: Table 6's VOC values
# (alpha = 0.2, beta = 0.02, T_w = 5 of 10 epochs, theta = 0.9), scored on the
# training pipeline and stopped at the first epoch with no new best as the
# release,
# fine-tuning EfficientNet-Lite0 from its ImageNet weights at 128 px (README,
# Proxy benchmark). The learning rate is the papers' pretrained-network value
# for the optimizer; it was not searched on the proxy. ResNet-50 at 448 px:
# '../_base_/models/resnet50.py' as the model base, a Resize to 448 and
# ImageNet normalization (configs/_base_/datasets/spml_448px.py).
_base_ = [
    '../_base_/models/efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py', '../_base_/schedules/adam.py',
    '../_base_/default_runtime.py'
]

model = dict(
    head=dict(
        num_classes=20,
        loss=dict(type='EMLoss', alpha=0.2, beta=0.02),
        label_bank=dict(type='LabelBank')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)

default_hooks = dict(
    pseudo_label=dict(
        type='SPMLPseudoLabelHook',
        warmup_epochs=5,
        updater=dict(type='AsymmetricPseudoLabeling',
                     negative_proportion=0.9),
        pipeline='train'),
    early_stopping=dict(type='SPMLEarlyStoppingHook'))
