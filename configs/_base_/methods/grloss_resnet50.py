# GR loss (Chen et al. 2024; docs/methods/grloss.md) on the papers'
# ResNet-50 recipe (grloss.py), for configs/grloss/resnet50_{voc,coco,
# nuswide,cub}.py (each adds its dataset, num_classes and its column of the
# paper's Table 6: learning rate, epochs T, beta_T and q3): ImageNet weights,
# 448 px, flip.
_base_ = ['../models/resnet50.py', './grloss.py']

model = dict(head=dict(loss=_base_.gr_loss))
