# VOC-like proxy (tools/make_proxy_data.py --like voc): 20 classes, 1.46
# positives per image, 4,574 train / 1,143 val / 5,823 test images of 128 px,
# in the interchange format under data/proxy-voc. Images are read at their
# 128 px (the resolution that fits a 2-core CPU; for ResNet-50 at 448 px add
# Resize), a random horizontal flip for training as the papers; batch size
# 8 as the papers' VOC/COCO runs. The loaders, splits and metric are those of
# the prepared datasets (spml_448px.py), without its Resize and workers.
# The proxy configs fine-tune EfficientNet-Lite0 from its ImageNet weights
# (configs/_base_/models/efficientnet_lite0.py) at the papers' learning rate
# for a pretrained network (their method base's schedule), not searched on
# the proxy. ResNet-50 at 448 px: '../_base_/models/resnet50.py' as the model
# base, a Resize to 448 and ImageNet normalization (spml_448px.py).
_base_ = ['./spml_448px.py']

data_root = 'data/proxy-voc'
num_classes = 20

# EfficientNet-Lite0's input scaling, RGB in [-1, 1] (ResNet-50: ImageNet's
# mean and std as configs/_base_/datasets/spml_448px.py)
data_preprocessor = dict(
    num_classes=num_classes,
    mean=[127.5, 127.5, 127.5],
    std=[127.5, 127.5, 127.5])

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
# evaluation samples keep gt_label_neg, which tells partly unknown labels
# (val_labels='observed', partial test labels) from full ones
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='PackInputs', algorithm_keys=('gt_label_neg', )),
]
# The linear regime reads the frozen backbone's features from a cache instead
# of the images (configs/*/efficientnet-lite0-linear_proxy-*.py). Write it
# once with
#   python tools/cache_features.py configs/an/efficientnet-lite0_proxy-voc.py
# (proxy-coco likewise). It holds every image and its mirror image, so
# training keeps its random horizontal flip.
feature_cache = f'{data_root}/features/efficientnet-lite0_128px.npz'
cached_train_pipeline = [
    dict(type='LoadCachedFeatures', cache_file=feature_cache, flip_prob=0.5),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
cached_test_pipeline = [
    dict(type='LoadCachedFeatures', cache_file=feature_cache),
    dict(type='PackInputs', algorithm_keys=('gt_label_neg', )),
]

train_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=64,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader  # merged into the base's, on the test split
