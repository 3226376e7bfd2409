# AN (assume negative, docs/methods/an.md) and the
# baselines that share its procedure: the community code's (train.py), Adam
# with one learning rate and no weight decay, 10 epochs, every epoch trained
# and the best validation epoch tested (configs/_base_/schedules/adam.py).
# The loss is the config's (model.head.loss).
_base_ = ['../schedules/adam.py', '../default_runtime.py']
