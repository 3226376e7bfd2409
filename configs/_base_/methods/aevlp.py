# AEVLP (Tran et al. 2025; docs/methods/teacher_pseudo_labels.md): GR loss
# extended to a teacher's pseudo-labels (GPR) and DAMP's pseudo-labels from
# the teacher's scores of each whole image and of a grid of its crops. The
# scores are a score file with crop scores (tools/score_teacher.py --crops;
# CLIP in the release), read into the head's label bank before training by
# SPMLTeacherScoreHook; a config names the file in
# model.head.label_bank.score_file. The release's procedure (train.py): Adam
# with the head's learning rate x10, GR's schedules of beta and alpha moved
# before every epoch, training stopped once val mAP falls more than 2 points
# below its best or after 2 epochs without a new best; the best validation
# epoch is tested.
#
# Switches, by name:
#   model.head.label_bank.score_file=PATH        the teacher's scores + crops
#   model.head.label_bank.threshold=0.5          tau
#   model.head.label_bank.top_k=3                positives per image at most
#   model.head.label_bank.negative_pseudo_labels=True   GPR's negative term
#   default_hooks.early_stopping=None            train every epoch
_base_ = ['../schedules/adam.py', '../default_runtime.py']

# configs/pascal.json of the release; a dataset config changes its column
gpr_loss = dict(
    type='GPRLoss',
    w=(0., 2.),  # beta: (w0, wT)
    b=(-2., -2.),  # beta: (b0, bT)
    mu=(0.5, 0.8),  # alpha: (mu0, muT)
    sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
    q2=0.01,
    q3=1.,
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

optim_wrapper = dict(paramwise_cfg=dict(
    custom_keys={'head': dict(lr_mult=10.)}))

default_hooks = dict(epoch_schedule=dict(type='SPMLEpochHook'),
                     early_stopping=dict(type='SPMLEarlyStoppingHook',
                                         max_drop=2., patience=2),
                     teacher_scores=dict(type='SPMLTeacherScoreHook'))
