# PASCAL VOC 2012 in the interchange format under data/voc (tools/prepare_spml.py
# voc): 4,574 train / 1,143 val / 5,823 test images, 1.46 positives per image. Images 448x448, random horizontal flip for
# training (SPEC 1).
# data/voc/images: link to the image folder (made by prepare_spml.py).
dataset_type = 'SPMLDataset'
data_root = 'data/voc'
num_classes = 20

data_preprocessor = dict(
    num_classes=num_classes,
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    to_rgb=True)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='PackInputs'),
]

train_dataloader = dict(
    batch_size=8,
    num_workers=4,
    persistent_workers=True,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix='images',
        split='train',
        pipeline=train_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True))
val_dataloader = dict(
    batch_size=32,
    num_workers=4,
    persistent_workers=True,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix='images',
        split='val',
        pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False))
test_dataloader = dict(
    batch_size=32,
    num_workers=4,
    persistent_workers=True,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix='images',
        split='test',
        pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False))
val_evaluator = dict(type='SPMLAveragePrecision')
test_evaluator = val_evaluator
