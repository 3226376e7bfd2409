# AEVLP (Tran et al. 2025), ResNet-50 on NUS-WIDE: 50.70 test mAP in the
# paper's table. The method, its procedure and switches:
# configs/_base_/methods/aevlp_resnet50.py. The teacher's scores, with crops,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = [
    '../_base_/methods/aevlp_resnet50.py', '../_base_/datasets/nuswide.py'
]

# configs/nuswide.json of the release: lam = [0.7, 0.5], reg = 0.001, eta =
# 0.3, threshold = 0.6, top_k = 3, beta = (0, 10, -2, -8), q3 = 1; expected
# positives 1.9
model = dict(head=dict(
    num_classes=81,
    loss=dict(w=(0.0, 10.0),
              b=(-2.0, -8.0),
              pseudo_weight_range=(0.5, 0.7),
              reg_weight=0.001,
              expected_positives=1.9),
    label_bank=dict(eta=0.3,
                    threshold=0.6,
                    score_file='data/nuswide/teacher_scores/clip_crops.npz')))

train_cfg = dict(max_epochs=10)
