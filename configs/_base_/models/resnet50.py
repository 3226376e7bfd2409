# ResNet-50 from torchvision's ImageNet weights (v1, as the papers), global
# average pooling and the SPML linear head. Without network, place the file
# that tools/train.py names (resnet50-0676ba61.pth) in torch hub's cache, or
# set model.backbone.init_cfg.checkpoint=/path/to/resnet50-0676ba61.pth
# (docs/user_guides/data_checks_and_offline.md).
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ResNet',
        depth=50,
        num_stages=4,
        out_indices=(3, ),
        style='pytorch',
        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='SPMLLinearClsHead',
        num_classes=20,
        in_channels=2048,
        loss=dict(type='ANLoss')))
