# CUB-200-2011 attributes in the interchange format under data/cub
# (tools/prepare_spml.py cub): 4,795 train / 1,199 val / 5,794 test images,
# 31.4 positives per image (docs/methods/protocol.md, Datasets and observed
# labels).
# data/cub/images: link to the image folder (made by prepare_spml.py).
_base_ = ['./spml_448px.py']

data_root = 'data/cub'
num_classes = 312

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=8, dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = dict(dataset=dict(data_root=data_root))
