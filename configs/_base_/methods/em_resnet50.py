# EM loss (docs/methods/em_apl.md, EM loss) on the papers' ResNet-50 recipe (em.py),
# for configs/em/resnet50_{voc,coco,nuswide,cub}.py (each adds its dataset,
# num_classes, alpha and, for CUB, the release's learning rate 1e-4): -log p
# on the observed positive, -alpha * H(p) on every unobserved label.
_base_ = ['../models/resnet50.py', './em.py']

model = dict(head=dict(loss=dict(type='EMLoss', alpha=0.1)))
