# GR loss (Chen et al. 2024; docs/methods.md, GR loss) on the papers'
# ResNet-50 recipe (grloss.py), for configs/grloss/resnet50_{voc,coco,
# nuswide,cub}.py (each adds its dataset, num_classes and its column of the
# paper's Table 6: learning rate, epochs T, beta_T and q3): ImageNet weights,
# 448 px, flip. alpha_0 and beta_0 are the release defaults (mu, sigma) =
# (0.5, 2) and (w, b) = (0, -2); alpha_T = (0.8, 0.5) everywhere.
_base_ = ['../models/resnet50.py', './grloss.py']

model = dict(
    head=dict(
        loss=dict(
            type='GRLoss',
            w=(0., 10.),  # beta: (w0, wT)
            b=(-2., -8.),  # beta: (b0, bT)
            mu=(0.5, 0.8),  # alpha: (mu0, muT)
            sigma=(2., 0.5),  # alpha: (sigma0, sigmaT)
            q2=0.01,
            q3=1.)))
