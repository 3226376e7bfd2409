# VLPL (Xing et al. 2024), ResNet-50 on NUS-WIDE: 49.55 test mAP in the
# release's README table. The method, its procedure and switches:
# configs/_base_/methods/vlpl_resnet50.py. The teacher's scores,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = [
    '../_base_/methods/vlpl_resnet50.py', '../_base_/datasets/nuswide.py'
]

# main_clip.py, nuswide: alpha = 0.1, beta_pos = 0.7, tau = 0.3
model = dict(head=dict(num_classes=81,
                       loss=dict(alpha=0.1),
                       label_bank=dict(
                           score_file='data/nuswide/teacher_scores/clip.npz')))

# batch 8 on every dataset
train_dataloader = dict(batch_size=8)
