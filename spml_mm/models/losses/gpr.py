"""AEVLP's equation: the generalized pseudo-label robust loss (GPR) of Tran
et al. (ICCV 2025) with its analytic gradient, written on GR's terms
(:func:`~spml_mm.models.losses.gr.gr_entries`).

:class:`GPRLoss` computes it with :func:`gpr_loss`.
"""
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F

from .epr_loss import expected_positives_penalty
from .gr import gaussian_weight, gr_entries
from .value_and_grad import differentiable


def gpr_value_and_grad(z: torch.Tensor,
                       s: torch.Tensor,
                       positive: torch.Tensor,
                       negative: torch.Tensor,
                       w: Union[float, torch.Tensor],
                       b: Union[float, torch.Tensor],
                       mu: float,
                       sigma: float,
                       q2: float = 0.01,
                       q3: float = 1.,
                       weight_min: float = 0.4,
                       weight_max: float = 0.7,
                       rho: float = 0.9,
                       reg: float = 0.05,
                       expected_positives: float = 1.5,
                       n: Optional[torch.Tensor] = None
                       ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Generalized pseudo-label robust loss (AEVLP, GPR).

    GR (:func:`~spml_mm.models.losses.gr.gr_value_and_grad`, ``L1 = -log
    p``) on the observed positives and the unobserved entries without a
    pseudo-label; on the pseudo-labels, with ``v(p)`` GR's weight read from
    the detached p, and the mean over B x C::

        positive pseudo-label  u(p) [rho (-log p) + (1 - rho) (-log(1 - p))]
                               u(p) = clip(1 - v(p), lambda_2, lambda_1)
                               dL/dz = u(p) (p - rho)
        negative pseudo-label  v(p) (-log(1 - p))      dL/dz = v(p) p

    plus ``reg`` times EPR's regulariser ``(m - k)^2 / C^2`` (``m`` the
    batch's mean sum of p, :func:`expected_positives_penalty`). An observed
    label keeps its GR term whatever its pseudo-label.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        positive (torch.Tensor): 0/1 (or boolean) mask (B, C) of the
            positive pseudo-labels.
        negative (torch.Tensor): 0/1 (or boolean) mask (B, C) of the
            negative pseudo-labels.
        w, b, mu, sigma, q2, q3: GR's (beta's w and b, alpha's mu and sigma).
        weight_min (float): lambda_2, the least weight of a positive
            pseudo-label. Defaults to 0.4.
        weight_max (float): lambda_1, its greatest weight. Defaults to 0.7.
        rho (float): rho, the target of a positive pseudo-label. Defaults to
            0.9.
        reg (float): Weight of the regulariser. Defaults to 0.05.
        expected_positives (float): k. Defaults to 1.5.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels (GR's ``-log(1 - p)``). Defaults to
            None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    value, grad = gr_entries(z, s, w, b, mu, sigma, None, q2, q3, n)
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    v = gaussian_weight(p, mu, sigma)
    # -log(1 - p) = z - log p
    log_q = log_p - z
    u = (1 - v).clamp_(weight_min, weight_max)
    on_positive = u * (log_q * (rho - 1) - rho * log_p)
    d_positive = u * (p - rho)
    observed = s.bool() if n is None else s.bool() | n
    positive = positive.bool() & ~observed
    negative = negative.bool() & ~observed
    value = torch.where(positive, on_positive, value)
    grad = torch.where(positive, d_positive, grad)
    value = torch.where(negative, -v * log_q, value)
    grad = torch.where(negative, v * p, grad)
    value, grad = value.mean(), grad / z.numel()
    if reg:
        penalty, d_penalty = expected_positives_penalty(p, expected_positives)
        value, grad = value + reg * penalty, grad.add_(d_penalty, alpha=reg)
    return value, grad


gpr_loss = differentiable(gpr_value_and_grad)
