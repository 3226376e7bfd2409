# A custom multi-label dataset under the SPML protocol (docs/user_guides/custom_and_partial_data.md):
# data/custom/{train,test}.json in MMPretrain's MultiLabelDataset format
# ({"metainfo": {"classes": [...]}, "data_list": [{"img_path": ...,
# "gt_label": [indices]}]}), images under data/custom/images. The train file
# is split 80/20 into train/val; one observed positive per training image.
_base_ = ['./spml_448px.py']

dataset_type = 'SPMLMultiLabelDataset'
data_root = 'data/custom'
num_classes = 20  # set to len(metainfo.classes)
ann_files = dict(train_ann_file='train.json', test_ann_file='test.json')

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    batch_size=16,
    dataset=dict(type=dataset_type, data_root=data_root, **ann_files))
val_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, **ann_files))
test_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, **ann_files))
