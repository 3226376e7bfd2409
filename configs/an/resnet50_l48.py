# AN (docs/methods/an.md) on L48's real single positives
# (configs/_base_/datasets/l48.py): each training clip observes its
# recording's target species, every other species unknown (with
# prepare_spml.py --variant geo or checklist, the released negatives are
# known negatives, which AN's BCE already takes as negatives); tested on the
# clips' released labels (spml/mAP_annotated).
_base_ = ['../_base_/methods/an_resnet50.py', '../_base_/datasets/l48.py']

model = dict(head=dict(num_classes=100))
