# OPML-SP (docs/methods/opml.md) on NUS-WIDE with a ResNet-101 backbone instead of
# the papers' ResNet-50: the recipe of configs/opml/resnet50_nuswide.py
# (one-pair loss, high-rank regularization, soft labels, AP-based label
# correction, SGD with one learning rate, batch 16, 10 epochs, 448 px, flip)
# with only the backbone swapped.
_base_ = ['./resnet50_nuswide.py']

# ImageNet-1k weights (78.0% top-1, MMPretrain's resnet101_8xb32_in1k),
# trained with the same pixel normalization as the ResNet-50 recipe.
# ResNet-101 is fully convolutional and ends in 2048 channels like
# ResNet-50, so the input size, pooling neck and head stay as they are.
checkpoint = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet101_8xb32_in1k_20210831-539c63f8.pth'  # noqa: E501
model = dict(
    backbone=dict(
        depth=101,
        init_cfg=dict(
            type='Pretrained', checkpoint=checkpoint, prefix='backbone')))
