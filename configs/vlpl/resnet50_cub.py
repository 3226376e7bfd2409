# VLPL (Xing et al. 2024), ResNet-50 on CUB-200-2011: 24.02 test mAP in the
# release's README table. The method, its procedure and switches:
# configs/_base_/methods/vlpl_resnet50.py. The teacher's scores,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = ['../_base_/methods/vlpl_resnet50.py', '../_base_/datasets/cub.py']

# main_clip.py, cub: alpha = 0.01, beta_pos = 0.7, tau = 0.3
model = dict(head=dict(num_classes=312,
                       loss=dict(alpha=0.01),
                       label_bank=dict(
                           score_file='data/cub/teacher_scores/clip.npz')))

# the release trains CUB at 1e-4
optim_wrapper = dict(optimizer=dict(lr=0.0001))
