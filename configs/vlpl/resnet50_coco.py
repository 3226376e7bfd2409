# VLPL (Xing et al. 2024), ResNet-50 on MS-COCO 2014: 71.45 test mAP in the
# release's README table. The method, its procedure and switches:
# configs/_base_/methods/vlpl_resnet50.py. The teacher's scores,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = ['../_base_/methods/vlpl_resnet50.py', '../_base_/datasets/coco.py']

# main_clip.py, coco: alpha = 0.1, beta_pos = 0.7, tau = 0.3
model = dict(head=dict(num_classes=80,
                       loss=dict(alpha=0.1),
                       label_bank=dict(
                           score_file='data/coco/teacher_scores/clip.npz')))

# batch 8 on every dataset
train_dataloader = dict(batch_size=8)
