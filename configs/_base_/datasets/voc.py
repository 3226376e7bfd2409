# PASCAL VOC 2012 in the interchange format under data/voc
# (tools/prepare_spml.py voc): 4,574 train / 1,143 val / 5,823 test images,
# 1.46 positives per image (docs/methods/protocol.md, Datasets and observed
# labels).
# data/voc/images: link to the image folder (made by prepare_spml.py).
_base_ = ['./spml_448px.py']

data_root = 'data/voc'
num_classes = 20

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=8, dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = dict(dataset=dict(data_root=data_root))
