# AN (docs/methods/an.md) on single-label class folders
# (configs/_base_/datasets/class_folders.py): each image's folder is its one
# observed positive, tested on test.json's label sets when it exists. Set
# num_classes to the number of class folders, e.g.
# --cfg-options model.head.num_classes=5 data_preprocessor.num_classes=5.
_base_ = [
    '../_base_/methods/an_resnet50.py', '../_base_/datasets/class_folders.py'
]

model = dict(head=dict(num_classes=20))
