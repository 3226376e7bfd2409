# A small CNN for the 48 px demo images, trained from scratch: the first three
# stages of MMPretrain's VGG-11 with batch norm (64/128/256 channels), global
# average pooling, and the SPML linear head.
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='VGG',
        depth=11,
        num_stages=3,
        dilations=(1, 1, 1),
        out_indices=(2, ),
        norm_cfg=dict(type='BN')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='SPMLLinearClsHead',
        num_classes=10,
        in_channels=256,
        loss=dict(type='ANLoss')))
