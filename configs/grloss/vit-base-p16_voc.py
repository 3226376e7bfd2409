# GR loss (docs/methods/grloss.md) on VOC 2012 with a ViT-B/16 backbone instead of the
# papers' ResNet-50: the recipe of configs/grloss/resnet50_voc.py (Table 6
# loss hyperparameters, Adam 1e-5 with the head at 10x, batch 8, 8 epochs,
# 448 px, flip) with only the backbone swapped.
_base_ = ['./resnet50_voc.py']

# ImageNet-21k pretrained, ImageNet-1k fine-tuned at 384 px (85.4% top-1,
# MMPretrain's vit-base-p16_in21k-pre_3rdparty_in1k-384px). At 448 px the
# image is 28 x 28 patches; MMPretrain resizes the checkpoint's 24 x 24
# position embedding when it loads the weights. The class token (768
# channels) feeds the head directly, so there is no pooling neck.
checkpoint = 'https://download.openmmlab.com/mmclassification/v0/vit/finetune/vit-base-p16_in21k-pre-3rdparty_ft-64xb64_in1k-384_20210928-98e8652b.pth'  # noqa: E501
model = dict(
    backbone=dict(
        _delete_=True,
        type='VisionTransformer',
        arch='b',
        img_size=448,
        patch_size=16,
        init_cfg=dict(
            type='Pretrained', checkpoint=checkpoint, prefix='backbone')),
    neck=None,
    head=dict(in_channels=768))

# the normalization this checkpoint was trained with (pixels to [-1, 1])
data_preprocessor = dict(mean=[127.5, 127.5, 127.5], std=[127.5, 127.5, 127.5])
