# VLPL (Xing et al. 2024), ResNet-50 on PASCAL VOC 2012: 89.1 test mAP in the
# release's README table. The method, its procedure and switches:
# configs/_base_/methods/vlpl_resnet50.py. The teacher's scores,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = ['../_base_/methods/vlpl_resnet50.py', '../_base_/datasets/voc.py']

# main_clip.py, pascal: alpha = 0.2, beta_pos = 0.7, tau = 0.3
model = dict(head=dict(num_classes=20,
                       loss=dict(alpha=0.2),
                       label_bank=dict(
                           score_file='data/voc/teacher_scores/clip.npz')))
