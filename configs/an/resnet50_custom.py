# AN on a custom multi-label dataset (configs/_base_/datasets/
# custom_multilabel.py): set num_classes to the number of classes of the
# annotation files, e.g. --cfg-options model.head.num_classes=5.
_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/custom_multilabel.py',
    '../_base_/schedules/adam.py', '../_base_/default_runtime.py'
]

model = dict(head=dict(num_classes=20, loss=dict(type='ANLoss')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)
