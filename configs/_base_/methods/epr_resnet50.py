# EPR (expected positive regularization, Cole et al. 2021; docs/methods.md,
# EPR) on the papers' ResNet-50 recipe, for
# configs/epr/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, k and the community code's learning rate and batch). The
# community code's procedure, as AN: Adam, one learning rate, 10 epochs, no
# early stopping, the best validation epoch tested.
_base_ = [
    '../models/resnet50.py', '../schedules/adam.py', '../default_runtime.py'
]

# k (expected_positives) is the dataset's average number of positives per
# image, set by each dataset config
model = dict(head=dict(loss=dict(type='EPRLoss')))

optim_wrapper = dict(optimizer=dict(lr=1e-5))
train_cfg = dict(max_epochs=10)
