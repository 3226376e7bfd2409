"""GR's equation: the generalized robust loss of Chen et al. (IJCAI 2024)
with its analytic gradient, fused in one pass over the logits.

:class:`GRLoss` and :class:`UnifiedSPMLLoss` (whose ``gr`` components run
it) both compute GR with :func:`gr_loss`; AEVLP's GPR
(:func:`~spml_mm.models.losses.gpr.gpr_value_and_grad`) starts from the
per-entry terms of :func:`gr_entries`.
"""
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F

from .value_and_grad import differentiable


def gaussian_weight(p: torch.Tensor, mu: float,
                    sigma: float) -> torch.Tensor:
    """GR's weight ``v(p) = exp(-(p - mu)^2 / (2 sigma^2))`` (alpha's mu and
    sigma), in place of a fresh tensor."""
    return (p - mu).square_().mul_(-0.5 / sigma**2).exp_()


def gr_entries(z: torch.Tensor,
               s: torch.Tensor,
               w: Union[float, torch.Tensor],
               b: Union[float, torch.Tensor],
               mu: float,
               sigma: float,
               q1: Optional[float] = None,
               q2: float = 0.01,
               q3: float = 1.,
               n: Optional[torch.Tensor] = None
               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """GR's loss of every entry and its derivative in the entry's logit,
    both (B, C); :func:`gr_value_and_grad` is their mean.

    The arguments are :func:`gr_value_and_grad`'s.
    """
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    q = 1 - p
    k = torch.mul(p, w).add_(b).sigmoid_()
    k_bar = 1 - k
    v = gaussian_weight(p, mu, sigma)
    p_q2 = torch.mul(log_p, q2).exp_()
    # (1 - p)^q3 with log(1 - p) = log p - z
    q_q3 = q if q3 == 1 else torch.mul(log_p - z, q3).exp_()
    l2, l3 = (1 - p_q2).mul_(k).div_(q2), (1 - q_q3).mul_(k_bar)
    unobserved = l2.add_(l3 if q3 == 1 else l3.div_(q3)).mul_(v)
    d_l2, d_l3 = torch.mul(k, p_q2).mul_(q), torch.mul(k_bar, q_q3).mul_(p)
    d_unobserved = d_l3.sub_(d_l2).mul_(v)
    if q1 is None:
        positive, d_positive = -log_p, -q
    else:
        p_q1 = torch.exp(q1 * log_p)
        positive, d_positive = (1 - p_q1) / q1, -p_q1 * q
    # the observed entries chosen by their 0/1 weight s (lerp is exact)
    s = s.to(z.dtype)
    value = unobserved.lerp_(positive, s)
    grad = d_unobserved.lerp_(d_positive, s)
    if n is not None:  # L1(1 - p), with log(1 - p) = log p - z
        if q1 is None:
            negative, d_negative = z - log_p, p
        else:
            q_q1 = torch.exp(q1 * (log_p - z))
            negative, d_negative = (1 - q_q1) / q1, q_q1 * p
        value = torch.where(n, negative, value)
        grad = torch.where(n, d_negative, grad)
    return value, grad


def gr_value_and_grad(z: torch.Tensor,
                      s: torch.Tensor,
                      w: Union[float, torch.Tensor],
                      b: Union[float, torch.Tensor],
                      mu: float,
                      sigma: float,
                      q1: Optional[float] = None,
                      q2: float = 0.01,
                      q3: float = 1.,
                      n: Optional[torch.Tensor] = None
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Generalized robust loss (GR paper Eq. 9, gradient Eq. 18).

    Per entry, mean over B x C, with k and v read from the detached p::

        L = s L1(p) + (1 - s) v(p) [k(p) L2(p) + (1 - k(p)) L3(p)]
        k(p) = sigmoid(w p + b)          v(p) = exp(-(p - mu)^2 / (2 sigma^2))
        L1 = -log p  (or (1 - p^q1)/q1)  dL1/dz = p - 1  (or -p^q1 (1 - p))
        L2 = (1 - p^q2) / q2             dL2/dz = -p^q2 (1 - p)
        L3 = (1 - (1 - p)^q3) / q3       dL3/dz = (1 - p)^q3 p

    An observed negative (``n``) costs L1 with p and 1 - p swapped,
    ``L1(1 - p) = -log(1 - p)`` (or ``(1 - (1 - p)^q1)/q1``), whose
    derivative is p (or ``(1 - p)^q1 p``). Powers are ``exp(q log p)`` from
    log-sigmoids, finite at any logit.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        w (float | torch.Tensor): Slope of k (beta's w); (C,) per class.
        b (float | torch.Tensor): Intercept of k (beta's b).
        mu (float): Centre of v (alpha's mu).
        sigma (float): Width of v (alpha's sigma), > 0.
        q1 (float, optional): None for ``L1 = -log p`` (the release).
        q2 (float): q2. Defaults to 0.01.
        q3 (float): q3. Defaults to 1.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    value, grad = gr_entries(z, s, w, b, mu, sigma, q1, q2, q3, n)
    return value.mean(), grad / z.numel()


gr_loss = differentiable(gr_value_and_grad)
