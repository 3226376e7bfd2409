# EM + APL (docs/methods/em_apl.md) on COCO 2014 with a Swin-T backbone instead of
# the papers' ResNet-50: the recipe of configs/em_apl/resnet50_coco.py (Table 6
# loss and pseudo-labeling hyperparameters, Adam 1e-5 for the whole network,
# batch 16, 10 epochs, 448 px, flip) with only the backbone swapped.
_base_ = ['./resnet50_coco.py']

# ImageNet-1k weights (81.2% top-1, MMPretrain's swin-tiny_16xb64_in1k),
# trained at 224 px with the same pixel normalization as the ResNet-50
# recipe. At 448 px the stages see 112, 56, 28 and 14 tokens a side, all
# multiples of the 7 x 7 window, so the checkpoint's relative position
# tables apply unchanged (Swin-T has no absolute position embedding). The
# last stage (768 channels) is average-pooled by the base config's neck.
checkpoint = 'https://download.openmmlab.com/mmclassification/v0/swin-transformer/swin_tiny_224_b16x64_300e_imagenet_20210616_090925-66df6be6.pth'  # noqa: E501
model = dict(
    backbone=dict(
        _delete_=True,
        type='SwinTransformer',
        arch='tiny',
        img_size=448,
        init_cfg=dict(
            type='Pretrained', checkpoint=checkpoint, prefix='backbone')),
    head=dict(in_channels=768))
