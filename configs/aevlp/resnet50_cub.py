# AEVLP (Tran et al. 2025), ResNet-50 on CUB-200-2011: 24.89 test mAP in the
# paper's table. The method, its procedure and switches:
# configs/_base_/methods/aevlp_resnet50.py. The teacher's scores, with crops,
# written by tools/score_teacher.py: docs/methods/teacher_pseudo_labels.md.
_base_ = ['../_base_/methods/aevlp_resnet50.py', '../_base_/datasets/cub.py']

# configs/cub.json of the release: lam = [0.8, 0.2], reg = 0.01, eta = 0.005,
# threshold = 0.005, top_k = 32, beta = (0, 10, -2, -8), q3 = 1.5; expected
# positives 31.4
model = dict(head=dict(
    num_classes=312,
    loss=dict(w=(0.0, 10.0),
              b=(-2.0, -8.0),
              q3=1.5,
              pseudo_weight_range=(0.2, 0.8),
              reg_weight=0.01,
              expected_positives=31.4),
    label_bank=dict(eta=0.005,
                    threshold=0.005,
                    top_k=32,
                    score_file='data/cub/teacher_scores/clip_crops.npz')))

train_cfg = dict(max_epochs=10)
