# A custom multi-label dataset under the SPML protocol (README "Data"):
# data/custom/{train,test}.json in MMPretrain's MultiLabelDataset format
# ({"metainfo": {"classes": [...]}, "data_list": [{"img_path": ...,
# "gt_label": [indices]}]}), images under data/custom/images. The train file
# is split 80/20 into train/val; one observed positive per training image.
dataset_type = 'SPMLMultiLabelDataset'
data_root = 'data/custom'
num_classes = 20  # set to len(metainfo.classes)

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
    batch_size=16,
    num_workers=4,
    persistent_workers=True,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        train_ann_file='train.json',
        test_ann_file='test.json',
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
        train_ann_file='train.json',
        test_ann_file='test.json',
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
        train_ann_file='train.json',
        test_ann_file='test.json',
        data_prefix='images',
        split='test',
        pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False))
val_evaluator = dict(type='SPMLAveragePrecision')
test_evaluator = val_evaluator
