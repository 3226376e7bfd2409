# Multi-digit demo dataset (tools/make_demo_data.py): 48x48 grey images with
# 1-4 digits, 3,200 train / 800 val / 2,000 test images, 10 classes. Images are
# stored grey and loaded as 3-channel so that any backbone takes them.
dataset_type = 'SPMLDataset'
data_root = 'data/demo'
num_classes = 10

# ClsDataPreprocessor's normalization, the batch moved in one copy of its
# images and one of its labels
data_preprocessor = dict(
    type='SPMLDataPreprocessor',
    num_classes=num_classes,
    mean=[45., 45., 45.],
    std=[60., 60., 60.],
    to_rgb=False)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', )),
]
# evaluation samples keep gt_label_neg, which tells partly unknown labels
# (val_labels='observed', partial test labels) from full ones
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='PackInputs', algorithm_keys=('gt_label_neg', )),
]

train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        split='train',
        pipeline=train_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True))
# the train loader on the val split, with the test pipeline, in order
val_dataloader = dict(
    train_dataloader,
    batch_size=128,
    dataset=dict(
        train_dataloader['dataset'], split='val', pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False))
# the val loader on the test split
test_dataloader = dict(
    val_dataloader, dataset=dict(val_dataloader['dataset'], split='test'))
val_evaluator = dict(type='SPMLAveragePrecision')
test_evaluator = val_evaluator
