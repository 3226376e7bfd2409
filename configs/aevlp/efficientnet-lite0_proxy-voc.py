# AEVLP (docs/methods/teacher_pseudo_labels.md) on the VOC-like proxy,
# fine-tuning EfficientNet-Lite0 at 128 px (docs/user_guides/datasets.md,
# proxy benchmarks; configs/_base_/datasets/proxy_voc.py). The teacher's
# scores, with crops, are data/proxy-voc/teacher_scores/synthetic_crops.npz
# (.dev_scripts/benchmark/teacher_quality.py writes a synthetic teacher of
# chosen quality there; the GPU evidence passes its model teacher's file
# instead). The release's VOC values (configs/pascal.json), the head's learning
# rate x10 and 8 epochs, as GR's fine-tuned proxy config.
_base_ = [
    '../_base_/methods/aevlp_efficientnet_lite0.py',
    '../_base_/datasets/proxy_voc.py'
]

model = dict(
    head=dict(
        num_classes=20,
        label_bank=dict(
            score_file='data/proxy-voc/teacher_scores/synthetic_crops.npz')))

train_cfg = dict(max_epochs=8)
