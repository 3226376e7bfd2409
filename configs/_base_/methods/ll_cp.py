# LL-Cp (large_loss.py): the corrections are permanent, kept in the head's
# label bank (the config's model.head.label_bank=CorrectedLabelBank).
_base_ = ['./large_loss.py']

default_hooks = dict(
    # sizes the corrections for the training set; merges the ranks' ones
    sample_state=dict(type='SPMLSampleStateHook'))
