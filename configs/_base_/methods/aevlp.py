# AEVLP (Tran et al. 2025; docs/methods/teacher_pseudo_labels.md): GR loss
# extended to a teacher's pseudo-labels (GPR) and DAMP's pseudo-labels from
# the teacher's scores of each whole image and of a grid of its crops. The
# scores are a score file with crop scores (tools/score_teacher.py --crops;
# CLIP in the release), read into the head's label bank before training by
# SPMLTeacherScoreHook; a config names the file in
# model.head.label_bank.score_file. The release's procedure (train.py) is
# GR's (grloss.py: Adam with the head's learning rate x10, GR's schedules of
# beta and alpha moved before every epoch, training stopped once val mAP
# falls more than 2 points below its best) that also stops after 2 epochs
# without a new best; the best validation epoch is tested.
#
# Switches, by name:
#   model.head.label_bank.score_file=PATH        the teacher's scores + crops
#   model.head.label_bank.threshold=0.5          tau
#   model.head.label_bank.top_k=3                positives per image at most
#   model.head.label_bank.negative_pseudo_labels=True   GPR's negative term
#   default_hooks.early_stopping=None            train every epoch
_base_ = ['./grloss.py']

# configs/pascal.json of the release: GR's loss (gr_loss: alpha's schedule,
# q2, q3) with VOC's beta and the teacher's terms; a dataset config changes
# its column
gpr_loss = dict(
    _base_.gr_loss,
    type='GPRLoss',
    w=(0., 2.),  # beta: (w0, wT)
    b=(-2., -2.),  # beta: (b0, bT)
    pseudo_weight_range=(0.4, 0.7),  # (lambda_2, lambda_1)
    pseudo_positive_target=0.9,  # rho
    reg_weight=0.05,
    expected_positives=1.5)
# DAMP on CLIP's softmax over classes (temperature 0.01). The release
# writes 0 (unlabelled) on each image's lowest negative_ratio of classes,
# so they make no negative pseudo-labels; negative_pseudo_labels=True makes
# them GPR's negative pseudo-labels
damp_bank = dict(
    type='DAMPLabelBank',
    score_file=None,
    eta=0.,
    threshold=0.5,
    top_k=3,
    negative_fraction=0.2,
    negative_pseudo_labels=False)

# GR's procedure (head rate x10, beta and alpha moved before every epoch,
# stopped 2 points below the best) with the release's patience, and the
# teacher's scores read before training
default_hooks = dict(early_stopping=dict(patience=2),
                     teacher_scores=dict(type='SPMLTeacherScoreHook'))
