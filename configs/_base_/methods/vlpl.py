# VLPL (Xing et al. 2024; docs/methods/teacher_pseudo_labels.md): EM on the
# observed labels, and a teacher's scores thresholded into positive
# pseudo-labels weighted beta_pos with soft target rho. The teacher's scores
# are a score file (tools/score_teacher.py; CLIP in the release), read into
# the head's label bank before training by SPMLTeacherScoreHook; a config
# names the file in model.head.label_bank.score_file. The release's
# procedure (main_clip.py): Adam with one learning rate, batch 8, 10 epochs,
# every epoch trained; the best validation epoch is tested.
#
# Switches, by name:
#   model.head.label_bank.score_file=PATH               the teacher's scores
#   model.head.label_bank.threshold=0.3                 tau
#   model.head.label_bank.negative_fraction=0.1         negative pseudo-labels
#   model.head.loss.pseudo_negative_weight=0.2          ... and their weight
_base_ = ['../schedules/adam.py', '../default_runtime.py']

# the release's VOC values; a dataset config changes alpha
vlpl_loss = dict(
    type='VLPLLoss',
    alpha=0.2,
    pseudo_positive_weight=0.7,  # beta_pos
    pseudo_negative_weight=0.,  # beta_neg
    pseudo_positive_target=0.9)  # rho
# the release's threshold on CLIP's softmax over classes (temperature 0.01);
# the ResNet-50 release makes no negative pseudo-labels
vlpl_bank = dict(type='TeacherLabelBank',
                 score_file=None,
                 threshold=0.3,
                 negative_fraction=0.)

default_hooks = dict(teacher_scores=dict(type='SPMLTeacherScoreHook'))
