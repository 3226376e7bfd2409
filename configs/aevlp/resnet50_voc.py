# AEVLP (Tran et al. 2025), ResNet-50 on PASCAL VOC 2012: 90.46 test mAP in the
# paper's table. The method, its procedure and switches:
# configs/_base_/methods/aevlp_resnet50.py. The teacher's scores, with crops,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = ['../_base_/methods/aevlp_resnet50.py', '../_base_/datasets/voc.py']

# configs/pascal.json of the release: lam = [0.7, 0.4], reg = 0.05, eta = 0.0,
# threshold = 0.5, top_k = 3, beta = (0, 2, -2, -2), q3 = 1; expected positives
# 1.5
model = dict(
    head=dict(num_classes=20,
              label_bank=dict(
                  score_file='data/voc/teacher_scores/clip_crops.npz')))

train_cfg = dict(max_epochs=8)
