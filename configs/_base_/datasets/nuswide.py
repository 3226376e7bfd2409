# NUS-WIDE in the interchange format under data/nuswide (tools/prepare_spml.py
# nuswide): 120,000 train / 30,000 val / 60,260 test images, 1.89 positives
# per image (docs/methods/protocol.md, Datasets and observed labels).
# data/nuswide/images: link to the image folder (made by prepare_spml.py).
_base_ = ['./spml_448px.py']

data_root = 'data/nuswide'
num_classes = 81

data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(batch_size=16, dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = dict(dataset=dict(data_root=data_root))
