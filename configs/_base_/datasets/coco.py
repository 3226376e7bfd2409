# MS-COCO 2014 in the interchange format under data/coco
# (tools/prepare_spml.py coco): 65,665 train / 16,416 val / 40,137 test
# images, 2.94 positives per image (docs/methods/protocol.md, Datasets and
# observed labels).
# data/coco/images: link to the image folder (made by prepare_spml.py).
_base_ = ['./spml_448px.py']

data_root = 'data/coco'
num_classes = 80

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=16, dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = dict(dataset=dict(data_root=data_root))
