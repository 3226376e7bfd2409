# L48 (Merlin's bird-sound spectrograms, NeurIPS 2025; docs/user_guides/
# datasets.md, L48) converted by `python tools/prepare_spml.py l48
# --data-root /datasets/L48 --out-dir data/l48`: train.json and test.json
# in the custom json layout (SPMLMultiLabelDataset), images through the
# data/l48/images link. The training clips observe their recording's
# target species (prepare_spml.py --variant target; geo and checklist add
# the released negatives), the released observation and no protocol draw;
# 20% of the training clips validate on their observed labels
# (spml/mAP_observed); the test clips are evaluated on their released
# present and absent species (spml/mAP_annotated), the rest unknown.
_base_ = ['./spml_448px.py']

dataset_type = 'SPMLMultiLabelDataset'
data_root = 'data/l48'
num_classes = 100  # the species of taxa.csv (else of the two json files)
l48 = dict(
    type=dataset_type,
    data_root=data_root,
    data_prefix='images',
    train_ann_file='train.json',
    test_ann_file='test.json')

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', 'gt_label_neg')),
]
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    batch_size=16, dataset=dict(l48, pipeline=train_pipeline))
val_dataloader = dict(dataset=l48)
test_dataloader = dict(dataset=l48)
