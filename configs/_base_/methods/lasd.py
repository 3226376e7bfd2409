# LASD (docs/methods.md, LASD): the leveraged asymmetric loss with
# disambiguation, plus consistency regularization over three views of each
# training image (the config's train_pipeline, a MultiView, and
# data_preprocessor=dict(type='MultiViewDataPreprocessor')). Adam with one
# learning rate, 10 epochs (Table 4 gives no batch size or learning rate,
# only the grids searched, {8, 16} and {1e-2 ... 1e-5}; these are the AN
# recipe's). The loss (Table 4's column) is the config's.
_base_ = ['../schedules/adam.py', '../default_runtime.py']

custom_hooks = _base_.custom_hooks + [
    # at least 2 views for the consistency term, and the right preprocessor
    dict(type='MultiViewCheckHook'),
]
