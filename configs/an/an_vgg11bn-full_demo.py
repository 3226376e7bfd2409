# Full-label BCE on the demo dataset: every training image keeps all its true
# labels. The upper bound the SPML methods are measured against
# (docs/methods/an.md).
_base_ = ['./an_vgg11bn_demo.py']

train_dataloader = dict(dataset=dict(full_labels=True))
