# ROLE (regularized online label estimation, Cole et al. 2021;
# docs/methods/role.md): the community code's procedure, as AN: Adam, 10
# epochs, no early stopping, the best validation epoch tested. The loss and
# the label-estimate table (its learning rate) are the config's.
_base_ = ['../schedules/adam.py', '../default_runtime.py']

default_hooks = dict(
    # sizes the table for the training set; merges the ranks' rows
    sample_state=dict(type='SPMLSampleStateHook'))
