# EM loss (docs/methods/em_apl.md, EM loss): the EM + APL release's procedure
# (main.py), Adam with one learning rate, training stopped at the first epoch
# whose val mAP is no new best; the best validation epoch is tested.
#
# Switch: default_hooks.early_stopping.max_drop=inf trains every epoch.
_base_ = ['../schedules/adam.py', '../default_runtime.py']

default_hooks = dict(early_stopping=dict(type='SPMLEarlyStoppingHook'))
