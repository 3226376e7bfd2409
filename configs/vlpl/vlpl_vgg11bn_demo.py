# VLPL (docs/methods/teacher_pseudo_labels.md) on the demo dataset, with a
# teacher's scores of the training images in data/demo/teacher_scores/
# (e.g. a synthetic teacher: PYTHONPATH=.dev_scripts python -m
# benchmark.teacher_quality --write-teacher, or any tagger's scores written by
# tools/score_teacher.py). Schedule of the AN demo
# (configs/an/an_vgg11bn_demo.py): from scratch, Adam 1e-3, batch 32, 6 epochs,
# so the two compare directly.
_base_ = [
    '../_base_/models/vgg11bn_demo.py', '../_base_/datasets/demo.py',
    '../_base_/methods/vlpl.py'
]

# the release's VOC values (VOC is the closest in classes and positives per
# image)
model = dict(
    head=dict(
        loss=_base_.vlpl_loss,
        label_bank=dict(
            _base_.vlpl_bank,
            score_file='data/demo/teacher_scores/synthetic.npz')))

# from scratch, Adam 1e-3 for the whole network
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=6)
