# IGNORE (docs/methods/ignore.md), ResNet-50 on CUB-200-2011 at the release's
# settings (configs/_base_/methods/ignore_resnet50.py: 25 epochs, batch 16,
# Adam 1e-5, classifier x10, 448 px, the strong view and the CAM mask).
_base_ = [
    '../_base_/methods/ignore_resnet50.py', '../_base_/datasets/cub.py'
]

train_pipeline = _base_.ignore_pipeline
train_dataloader = dict(batch_size=16, dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewDataPreprocessor')

model = dict(head=dict(num_classes=312))
