# Single-label class folders (MMPretrain's CustomDataset layout) as real
# single positives (SPMLClassFolderDataset; docs/user_guides/
# custom_and_partial_data.md, Class folders): data/class_folders/train/
# <class>/<image>, each image observing its folder's class (every other
# class unknown, no protocol draw); 20% held out to validate on these
# observed labels (spml/mAP_observed); the test split is test.json
# (MultiLabelDataset format, img_path relative to test/) when it exists,
# evaluated on its full labels (spml/mAP), else test/<class>/<image>.
_base_ = ['./spml_448px.py']

dataset_type = 'SPMLClassFolderDataset'
data_root = 'data/class_folders'
num_classes = 20  # the number of class folders
folders = dict(
    type=dataset_type,
    data_root=data_root,
    data_prefix='',
    train_prefix='train',
    test_prefix='test',
    test_ann_file='test.json')

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=16, dataset=folders)
val_dataloader = dict(dataset=folders)
test_dataloader = dict(dataset=folders)
