# AN (assume negative, docs/methods.md, AN and its variants) on the papers'
# ResNet-50 recipe, for configs/an/resnet50_{voc,coco,nuswide,cub,custom}.py
# (each adds its dataset, num_classes and, where it differs, the learning
# rate): Adam with one learning rate of 1e-5 and no weight decay, 10 epochs,
# every epoch trained and the best validation epoch tested (community code,
# train.py).
#
# Variants by switch: AN-LS model.head.loss.label_smoothing=0.1,
# WAN model.head.loss.unobserved_weight=wan.
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

model = dict(head=dict(loss=dict(type='ANLoss')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)
