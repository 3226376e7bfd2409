# OPML with full labels on the demo dataset, the paper's second setting: every
# training image keeps all its true labels, and the one-pair loss takes its
# full-label form log(alpha + sum_{j in N} e^{z_j}) + log(beta + sum_{i in P}
# e^{-z_i}) (docs/methods/opml.md). Same loss and schedule as
# configs/opml/opml_vgg11bn_demo.py; compare with full-label BCE in
# configs/an/an_vgg11bn-full_demo.py.
_base_ = ['./opml_vgg11bn_demo.py']

train_dataloader = dict(dataset=dict(full_labels=True))
