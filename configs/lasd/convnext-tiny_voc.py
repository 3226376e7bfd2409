# LASD (docs/methods/lasd.md) on VOC 2012 with a ConvNeXt-T backbone instead of
# the papers' ResNet-50: the recipe of configs/lasd/resnet50_voc.py (Table 4
# loss hyperparameters, three views with the consistency term, Adam 1e-5 with
# one learning rate, batch 8, 10 epochs, 448 px) with only the backbone
# swapped.
_base_ = ['./resnet50_voc.py']

# ImageNet-1k weights (82.1% top-1, MMPretrain's convnext-tiny_32xb128_in1k),
# trained with the same pixel normalization as the ResNet-50 recipe. ConvNeXt
# is fully convolutional, so it runs at 448 px as is. It pools its last stage
# itself (global average, then its final layer norm) and outputs 768
# channels, so there is no pooling neck.
checkpoint = 'https://download.openmmlab.com/mmclassification/v0/convnext/convnext-tiny_32xb128_in1k_20221207-998cf3e9.pth'  # noqa: E501
model = dict(
    backbone=dict(
        _delete_=True,
        type='ConvNeXt',
        arch='tiny',
        init_cfg=dict(
            type='Pretrained', checkpoint=checkpoint, prefix='backbone')),
    neck=None,
    head=dict(in_channels=768))
