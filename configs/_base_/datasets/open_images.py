# Open Images-style partial labels (SPMLOpenImages; docs/user_guides/
# custom_and_partial_data.md, Open Images-style CSVs) under data/openimages:
# image-level human-verified labels, ImageID,Source,LabelName,Confidence
# (1 verified present, 0 verified absent, a class not listed unknown), for
# the training images (split 80/20 into train/val) and the test images, and
# the classes' LabelName,DisplayName rows, in column order
# (class-descriptions-boxable.csv: the 601 boxable classes; any file of the
# classes to learn, oidv6-class-descriptions.csv for all). Images:
# train/<ImageID>.jpg, validation/<ImageID>.jpg. Several verified positives per image
# (single_positive=False); the observed negatives reach the loss
# (PackInputs keeps gt_label_neg); val and test are evaluated on their
# annotated entries (spml/mAP_annotated).
_base_ = ['./spml_448px.py']

dataset_type = 'SPMLOpenImages'
data_root = 'data/openimages'
num_classes = 601  # the rows of class_file
open_images = dict(
    type=dataset_type,
    data_root=data_root,
    data_prefix='',
    train_ann_file='oidv6-train-annotations-human-imagelabels.csv',
    test_ann_file='validation-annotations-human-imagelabels.csv',
    class_file='class-descriptions-boxable.csv',
    single_positive=False)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs', algorithm_keys=('gt_label_full', 'gt_label_neg')),
]
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    batch_size=16, dataset=dict(open_images, pipeline=train_pipeline))
val_dataloader = dict(dataset=open_images)
test_dataloader = dict(dataset=open_images)
