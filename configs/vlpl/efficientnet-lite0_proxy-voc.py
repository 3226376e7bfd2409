# VLPL (docs/methods/teacher_pseudo_labels.md) on the VOC-like proxy,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md,
# proxy benchmarks; configs/_base_/datasets/proxy_voc.py). The teacher's
# scores are data/proxy-voc/teacher_scores/synthetic.npz
# (.dev_scripts/benchmark/teacher_quality.py writes a synthetic teacher of
# chosen quality there; the GPU evidence passes its model teacher's file
# instead). The release's VOC values, 10 epochs, one learning rate as EM's on
# this proxy (the loss is EM's on every entry without a pseudo-label).
_base_ = [
    '../_base_/methods/vlpl_efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py'
]

model = dict(
    head=dict(
        num_classes=20,
        label_bank=dict(
            score_file='data/proxy-voc/teacher_scores/synthetic.npz')))
