# What the prepared official datasets (voc.py, coco.py, nuswide.py, cub.py)
# share, and the proxies (proxy_voc.py) but for the size and workers: the
# interchange format (tools/prepare_spml.py) with images under
# DATA_ROOT/images, 448x448 inputs, a random horizontal flip for training
# (docs/methods/procedure.md, Training procedure), ImageNet normalization and the SPML
# mAP. A dataset config sets data_root in the three dataloaders, num_classes
# and the training batch size.
dataset_type = 'SPMLDataset'

# ClsDataPreprocessor's normalization, the batch moved to the device in one
# copy of its images and one of its labels (not one per sample)
data_preprocessor = dict(
    type='SPMLDataPreprocessor',
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    to_rgb=True)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
# evaluation samples keep gt_label_neg, which tells partly unknown labels
# (val_labels='observed', partial test labels) from full ones
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='PackInputs', algorithm_keys=('gt_label_neg', )),
]

train_dataloader = dict(
    num_workers=4,
    persistent_workers=True,
    dataset=dict(
        type=dataset_type,
        data_prefix='images',
        split='train',
        pipeline=train_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True))
# the train loader on the val split, with the test pipeline, in order
val_dataloader = dict(
    train_dataloader,
    batch_size=32,
    dataset=dict(
        train_dataloader['dataset'], split='val', pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False))
# the val loader on the test split
test_dataloader = dict(
    val_dataloader, dataset=dict(val_dataloader['dataset'], split='test'))
val_evaluator = dict(type='SPMLAveragePrecision')
test_evaluator = val_evaluator
