from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .unified_spml_loss import UnifiedSPMLLoss
from .value_and_grad import differentiable

Schedule = Union[float, Tuple[float, float]]


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
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    q = 1 - p
    k = torch.mul(p, w).add_(b).sigmoid_()
    k_bar = 1 - k
    v = (p - mu).square_().mul_(-0.5 / sigma**2).exp_()
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
    value, grad = value.mean(), grad / z.numel()
    return value, grad


gr_loss = differentiable(gr_value_and_grad)


def _pair(value: Schedule) -> Tuple[float, float]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,
                                                                  value)


@MODELS.register_module()
class GRLoss(UnifiedSPMLLoss):
    """Generalized robust (GR) loss for SPML (Chen et al., IJCAI 2024).

    The loss is :func:`gr_value_and_grad` (docs/methods.md, GR loss).

    The unified framework (:class:`UnifiedSPMLLoss`) with the GR components:
    the soft pseudo-label ``k(p; beta) = sigmoid(w p + b)``, the weight
    ``v(p; alpha) = exp(-(p - mu)^2 / (2 sigma^2))`` of unobserved entries,
    and the robust losses of paper Eq. 14. ``w``, ``b``, ``mu`` and ``sigma``
    are ``(start, end)`` pairs moved before every epoch by ``SPMLEpochHook``
    with the release's semantics (beta at ``epoch / T``, alpha at
    ``(epoch + 1) / T``, 0-based epoch); a single number keeps the value
    fixed. Defaults are the release's and the VOC column of Table 6.

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
        for name, q in (('q1', q1), ('q2', q2), ('q3', q3)):
            if not (q is None and name == 'q1' or
                    isinstance(q, (int, float)) and 0 < q < float('inf')):
                raise ValueError(f'{name} must be a number > 0'
                                 f'{" or None" if name == "q1" else ""}, '
                                 f'got {q!r}')
        for name, value in (('w', w), ('b', b), ('mu', mu), ('sigma', sigma)):
            if not isinstance(value, (int, float)) and not (
                    isinstance(value, (tuple, list)) and len(value) == 2):
                raise ValueError(f'{name} must be a number or a (start, end) '
                                 f'pair, got {value!r}')
            if not all(abs(v) < float('inf') for v in _pair(value)):
                raise ValueError(f'{name} must be finite, got {value!r}')
        if min(_pair(sigma)) <= 0:
            raise ValueError('sigma must be > 0 at both ends of its schedule'
                             f', got {sigma!r}')
        super().__init__(
            preset='gr',
            k=dict(type='logistic', w=w, b=b),
            v=dict(type='gaussian', mu=mu, sigma=sigma),
            l1=dict(type='log') if q1 is None else dict(type='gce', q=q1),
            l2=dict(type='gce', q=q2),
            l3=dict(type='gce_neg', q=q3),
            trainable_k=trainable_beta,
            num_classes=num_classes)
        self.q1, self.q2, self.q3 = q1, q2, q3

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        if self.trainable_k:
            # w and b learn through k: the framework's autograd form
            return super().forward(cls_score, target, observed_negative)
        self._warn_without_schedule()
        return gr_loss(cls_score, target, self._k_now['w'], self._k_now['b'],
                       self._v_now['mu'], self._v_now['sigma'], self.q1,
                       self.q2, self.q3, observed_negative)
