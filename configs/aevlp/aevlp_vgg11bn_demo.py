# AEVLP (docs/methods/teacher_pseudo_labels.md) on the demo dataset, with a
# teacher's scores of the training images and of their crops in
# data/demo/teacher_scores/ (e.g. a synthetic teacher: python -m
# benchmark.teacher_quality --write-teacher, or a CLIP teacher written
# by tools/score_teacher.py --crops). Schedule of the GR demo
# (configs/grloss/grloss_vgg11bn_demo.py): from scratch, Adam 1e-3, batch
# 32, 6 epochs.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/aevlp.py'
]

# the release's VOC column; the demo's 2.06 positives per image
model = dict(
    head=dict(
        loss=dict(_base_.gpr_loss, expected_positives=2.06),
        label_bank=dict(
            _base_.damp_bank,
            score_file='data/demo/teacher_scores/synthetic_crops.npz')))

# From scratch, Adam 1e-3 for the whole network: the release's 10x rate
# for the head belongs to its pretrained backbone.
optim_wrapper = dict(
    _delete_=True, optimizer=dict(type='Adam', lr=1e-3, weight_decay=0.))
train_cfg = dict(max_epochs=6)
