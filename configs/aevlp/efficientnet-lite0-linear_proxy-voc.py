# AEVLP (docs/methods/teacher_pseudo_labels.md) in the linear regime of the
# VOC-like proxy: the ImageNet-pretrained EfficientNet-Lite0 stays frozen and
# only the classifier trains, on the features cached once by
# tools/cache_features.py (README, Proxy benchmark). The teacher's scores,
# with crops, are data/proxy-voc/teacher_scores/synthetic_crops.npz
# (.dev_scripts/benchmark/teacher_quality.py writes a synthetic teacher of
# chosen quality there). The learning rate is GR's on this proxy (GPR is GR's
# on every entry without a pseudo-label); the release's VOC values, 8 epochs.
_base_ = [
    '../_base_/datasets/proxy_voc_cached.py', '../_base_/methods/aevlp.py'
]

model = dict(
    head=dict(
        num_classes=20,
        loss=_base_.gpr_loss,
        label_bank=dict(
            _base_.damp_bank,
            score_file='data/proxy-voc/teacher_scores/synthetic_crops.npz')))

train_cfg = dict(max_epochs=8)
# only the head trains: its rate is 10x this one, as in the release
optim_wrapper = dict(optimizer=dict(lr=0.0001))
