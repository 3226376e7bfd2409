# EPR (expected positive regularization, Cole et al. 2021; docs/methods/epr.md,
# EPR): the community code's procedure, as AN (an.py). The loss and k
# (expected_positives, the dataset's average positives per image) are the
# config's.
_base_ = ['./an.py']
