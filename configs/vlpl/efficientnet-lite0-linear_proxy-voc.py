# VLPL (docs/methods/teacher_pseudo_labels.md) in the linear regime of the
# VOC-like proxy: the ImageNet-pretrained EfficientNet-Lite0 stays frozen and
# only the classifier trains, on the features cached once by
# tools/cache_features.py (README, Proxy benchmark). The teacher's scores are
# data/proxy-voc/teacher_scores/synthetic.npz (.dev_scripts/benchmark/
# teacher_quality.py writes a synthetic teacher of chosen quality there). The
# learning rate is EM's on this proxy (the loss is EM's on every entry
# without a pseudo-label); the release's VOC values, 10 epochs.
_base_ = [
    '../_base_/datasets/proxy_voc_cached.py', '../_base_/methods/vlpl.py'
]

model = dict(
    head=dict(
        num_classes=20,
        loss=_base_.vlpl_loss,
        label_bank=dict(
            _base_.vlpl_bank,
            score_file='data/proxy-voc/teacher_scores/synthetic.npz')))
optim_wrapper = dict(optimizer=dict(lr=0.001))
