"""GR: the generalized robust loss of Chen et al. (IJCAI 2024), its equation
with its analytic gradient, fused in one pass over the logits
(:func:`gr_value_and_grad`), and its module (:class:`GRLoss`).

:class:`~.unified_spml_loss.UnifiedSPMLLoss` (whose ``gr`` components run
it) computes GR with :func:`gr_loss` too; AEVLP's GPR
(:func:`~spml_mm.models.losses.gpr.gpr_value_and_grad`) starts from the
per-entry terms of :func:`gr_entries`.
"""
from typing import Dict, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..epoch_scheduled import Schedule
from .components import ComponentLoss
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


@MODELS.register_module()
class GRLoss(ComponentLoss):
    """Generalized robust (GR) loss for SPML (Chen et al., IJCAI 2024).

    The unified framework's loss (:class:`~.components.ComponentLoss`, which
    checks the arguments and moves the schedules) with the GR components:
    the soft pseudo-label ``k(p; beta) = sigmoid(w p + b)``, the weight
    ``v(p; alpha) = exp(-(p - mu)^2 / (2 sigma^2))`` of unobserved entries,
    and the robust losses of paper Eq. 14. ``w``, ``b``, ``mu`` and ``sigma``
    are ``(start, end)`` pairs moved before every epoch by ``SPMLEpochHook``
    with the release's semantics (beta at ``epoch / T``, alpha at
    ``(epoch + 1) / T``, 0-based epoch); a single number keeps the value
    fixed; :meth:`schedule_now` gives their current values. Defaults are
    the release's and the VOC column of Table 6. The loss is
    :func:`gr_value_and_grad` (docs/methods/grloss.md); with
    ``trainable_beta``, the framework's autograd form of the same
    components, through which w and b learn.

    Args:
        w (float | tuple): Slope of k, ``(w0, wT)`` of beta. Defaults to
            ``(0., 2.)``; Table 6: ``(0., 10.)`` on COCO, NUS-WIDE and CUB.
        b (float | tuple): Intercept of k, ``(b0, bT)`` of beta. Defaults to
            ``(-2., -2.)``; Table 6: ``(-2., -8.)`` on COCO, NUS-WIDE, CUB.
        mu (float | tuple): Centre of v, ``(mu0, muT)`` of alpha. Defaults
            to ``(0.5, 0.8)``.
        sigma (float | tuple): Width of v, ``(sigma0, sigmaT)`` of alpha,
            > 0. Defaults to ``(2., 0.5)``.
        q1 (float, optional): q1 of ``L1 = (1 - p^q1) / q1`` on the observed
            positive, > 0; None uses ``-log p`` as the release (the paper
            writes q1 = 0.01). Defaults to None.
        q2 (float): q2 of ``L2 = (1 - p^q2) / q2``, > 0. Defaults to 0.01.
        q3 (float): q3 of ``L3 = (1 - (1-p)^q3) / q3``, > 0. Defaults to 1
            (1.5 on CUB in Table 6).
        trainable_beta (bool): Learn ``(w, b)`` per class online instead of
            scheduling them (the paper's Table 3, last row), starting at
            their start values. Defaults to False.
        num_classes (int, optional): Number of classes C, required with
            ``trainable_beta``. Defaults to None.

    Example:
        >>> # COCO, Table 6
        >>> loss = dict(type='GRLoss', w=(0., 10.), b=(-2., -8.),
        ...             mu=(0.5, 0.8), sigma=(2., 0.5), q2=0.01, q3=1.)
        >>> head = dict(type='SPMLLinearClsHead', num_classes=80,
        ...             in_channels=2048, loss=loss)
        >>> custom_hooks = [dict(type='SPMLEpochHook')]
    """

    USER_KEYS = {
        'k.w': 'w',
        'k.b': 'b',
        'v.mu': 'mu',
        'v.sigma': 'sigma',
        'l1.q': 'q1',
        'l2.q': 'q2',
        'l3.q': 'q3',
        'trainable_k': 'trainable_beta'
    }

    def __init__(self,
                 w: Schedule = (0., 2.),
                 b: Schedule = (-2., -2.),
                 mu: Schedule = (0.5, 0.8),
                 sigma: Schedule = (2., 0.5),
                 q1: Optional[float] = None,
                 q2: float = 0.01,
                 q3: float = 1.,
                 trainable_beta: bool = False,
                 num_classes: Optional[int] = None):
        super().__init__(
            dict(k=dict(type='logistic', w=w, b=b),
                 v=dict(type='gaussian', mu=mu, sigma=sigma),
                 l1=dict(type='log') if q1 is None else dict(type='gce',
                                                              q=q1),
                 l2=dict(type='gce', q=q2),
                 l3=dict(type='gce_neg', q=q3)),
            trainable_k=trainable_beta,
            num_classes=num_classes)
        self.q1, self.q2, self.q3 = q1, q2, q3

    def schedule_now(self) -> Dict[str, float]:
        """beta's ``w``, ``b`` and alpha's ``mu``, ``sigma`` at the current
        epoch (their start values before :meth:`set_epoch`)."""
        return {**self.k_now, **self.v_now}

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        if self.trainable_k:  # the autograd form, through which w, b learn
            return super().spml_loss(z, s, n)
        self.warn_without_schedule()
        now = self.schedule_now()
        return gr_loss(z, s, now['w'], now['b'], now['mu'], now['sigma'],
                       self.q1, self.q2, self.q3, n)
