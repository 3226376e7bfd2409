from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from .base import BaseSPMLLoss
from .value_and_grad import differentiable, indicator


def theorem_5_4_lambda_neg(lambda_pos: float, avg_positives: float,
                           num_classes: int) -> float:
    """The negative leverage that makes LASD consistent (LASD Theorem 5.4).

    Solves ``1 + lambda_pos * (kbar - 1) = lambda_neg * (K - kbar)``, which
    makes LASD risk-consistent to the cost-sensitive Hamming loss.

    Args:
        lambda_pos (float): Positive leverage lambda_+.
        avg_positives (float): Average number of positives per image kbar.
        num_classes (int): Number of classes K.

    Returns:
        float: lambda_-.
    """
    return (1 + lambda_pos * (avg_positives - 1)) / (
        num_classes - avg_positives)


def lasd_value_and_grad(z: torch.Tensor,
                        s: torch.Tensor,
                        lambda_pos: float,
                        lambda_neg: float,
                        tau: float,
                        gamma_pos: float = 0.,
                        gamma_neg: float = 4.,
                        n: Optional[torch.Tensor] = None
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Leveraged asymmetric loss with disambiguation (LASD paper Eq. 6).

    Sum over classes, mean over the batch; an unobserved label is a pseudo
    positive when its detached ``p > tau``::

        L  = w+ Lp + w- Ln     w+ = s + lambda_pos (1 - s) [p > tau]
                               w- = lambda_neg (1 - s) [p <= tau]
        Lp = -(1 - p)^g+ log p      dLp/dz = (1 - p)^g+ [g+ p log p - (1 - p)]
        Ln = -p^g- log(1 - p)       dLn/dz = p^g- [p - g- (1 - p) log(1 - p)]

    with ``g+ = gamma_pos`` and ``g- = gamma_neg``. Each entry has one of
    the two terms: w+ > 0 exactly where ``s = 1`` or ``p > tau`` and w- = 0
    there, so the terms are chosen entry by entry rather than weighted by
    zeros. An observed negative (``n``) costs ``Ln`` with
    weight 1, at any p (it is never disambiguated into a positive).
    Powers are ``exp(gamma log p)`` from log-sigmoids, finite at any logit.

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        s (torch.Tensor): Observed positives in 0/1, shape (B, C).
        lambda_pos (float): lambda_+.
        lambda_neg (float): lambda_-.
        tau (float): tau.
        gamma_pos (float): gamma_+. Defaults to 0.
        gamma_neg (float): gamma_-. Defaults to 4.
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels. Defaults to None.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    q, log_q = 1 - p, log_p - z  # log(1 - p) = log p - z
    # entries are chosen with 0/1 weights (torch.lerp is exact at 0 and 1)
    s = s.to(z.dtype)
    disambiguated = indicator(torch.gt, p, tau, p)  # [p > tau]
    positive = torch.maximum(s, disambiguated)
    if n is not None:
        positive.masked_fill_(n, 0.)
    # w+ on the positive term's entries, w- on the others; with the batch
    # mean's 1 / B
    one, w_pos, w_neg = (z.new_full((), w).div_(z.size(0))
                         for w in (1., lambda_pos, lambda_neg))  # no copy
    weight = torch.empty_like(z).copy_(w_neg).lerp_(w_pos, disambiguated)
    weight.lerp_(one, s)
    if n is not None:
        weight = torch.where(n, one, weight)
    if gamma_pos:
        focus_pos = torch.mul(log_q, gamma_pos).exp_()
        loss_pos = focus_pos * log_p
        grad_pos = torch.addcmul(-q, p, log_p,
                                 value=gamma_pos).mul_(focus_pos)
    else:
        loss_pos, grad_pos = log_p, -q
    if gamma_neg:
        focus_neg = torch.mul(log_p, gamma_neg).exp_()
        loss_neg = focus_neg * log_q
        grad_neg = torch.addcmul(p, q, log_q,
                                 value=-gamma_neg).mul_(focus_neg)
    else:
        loss_neg, grad_neg = log_q, p
    term = torch.lerp(loss_neg, loss_pos, positive)
    value = -weight.view(-1).dot(term.view(-1))
    grad = torch.lerp(grad_neg, grad_pos, positive).mul_(weight)
    return value, grad


lasd_loss = differentiable(lasd_value_and_grad)


@MODELS.register_module()
class LASDLoss(BaseSPMLLoss):
    """Leveraged asymmetric loss with disambiguation, LASD.

    The loss is :func:`lasd_value_and_grad` (docs/methods/lasd.md).

    ``lambda_neg`` is either given or derived from Theorem 5.4 of the paper,
    ``lambda_neg = (1 + lambda_pos (kbar - 1)) / (K - kbar)``, from the
    dataset's average number of positives per image ``avg_positives``
    (kbar) and ``num_classes`` (K). Special cases: ``tau=1`` turns the
    disambiguation off (every unobserved label is a negative, the paper's
    "leverage only" row); with ``tau=1`` and both gammas 0 it is WAN, with
    ``lambda_pos = lambda_neg = tau = 1`` it is ASL without clipping. The
    consistency term of the paper is separate: ``ViewConsistency`` on the
    head.

    Args:
        lambda_pos (float): Leverage ``lambda_+`` of pseudo positives, >= 0
            (Table 4: VOC 0.10, COCO 0.03, NUS 0.015, CUB 0.005).
        tau (float): Disambiguation threshold tau in [0, 1]; an unobserved
            label with ``p > tau`` is a pseudo positive (Table 4: 0.90, 0.90,
            0.95, 0.93).
        gamma_pos (float): Focusing parameter ``gamma_+`` >= 0. Defaults to 0.
        gamma_neg (float): Focusing parameter ``gamma_-`` >= 0. Defaults to 4.
        lambda_neg (float, optional): Leverage ``lambda_-`` of pseudo
            negatives, >= 0. Give it, or give ``avg_positives`` and
            ``num_classes``.
        avg_positives (float, optional): Average positives per image kbar,
            in (1, num_classes), for Theorem 5.4.
        num_classes (int, optional): Number of classes K, for Theorem 5.4;
            the logits must then have K columns.

    Example:
        >>> head = dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='LASDLoss', lambda_pos=0.1, tau=0.9,
        ...               avg_positives=1.46, num_classes=20))
    """

    def __init__(self,
                 lambda_pos: float,
                 tau: float,
                 gamma_pos: float = 0.,
                 gamma_neg: float = 4.,
                 lambda_neg: Optional[float] = None,
                 avg_positives: Optional[float] = None,
                 num_classes: Optional[int] = None):
        super().__init__()
        for name, value in (('lambda_pos', lambda_pos),
                            ('gamma_pos', gamma_pos), ('gamma_neg',
                                                       gamma_neg)):
            if not 0 <= value < float('inf'):
                raise ValueError(f'{name} must be >= 0, got {value}')
        if not 0 <= tau <= 1:
            raise ValueError(f'tau must be in [0, 1], got {tau}')
        theorem = avg_positives is not None or num_classes is not None
        if lambda_neg is not None and theorem:
            raise ValueError(
                'give either lambda_neg or avg_positives and num_classes '
                '(Theorem 5.4), not both')
        if lambda_neg is None:
            if avg_positives is None or num_classes is None:
                raise ValueError(
                    'lambda_neg is not given: set avg_positives (kbar) and '
                    'num_classes (K) to derive it from Theorem 5.4')
            if not 1 < avg_positives < num_classes:
                raise ValueError(
                    f'avg_positives must be in (1, num_classes={num_classes})'
                    f', got {avg_positives}')
            lambda_neg = theorem_5_4_lambda_neg(lambda_pos, avg_positives,
                                                num_classes)
        elif not 0 <= lambda_neg < float('inf'):
            raise ValueError(f'lambda_neg must be >= 0, got {lambda_neg}')
        self.lambda_pos = lambda_pos
        self.lambda_neg = lambda_neg
        self.tau = tau
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.num_classes = num_classes

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        if self.num_classes is not None and z.size(1) != self.num_classes:
            raise ValueError(
                f'LASDLoss derived lambda_neg for num_classes='
                f'{self.num_classes} but the logits have {z.size(1)} '
                'classes; make loss.num_classes and head.num_classes agree')
        return lasd_loss(z, s, self.lambda_pos, self.lambda_neg, self.tau,
                         self.gamma_pos, self.gamma_neg, n)

    def extra_repr(self) -> str:
        return (f'lambda_pos={self.lambda_pos}, '
                f'lambda_neg={self.lambda_neg:.6g}, tau={self.tau}, '
                f'gamma_pos={self.gamma_pos}, gamma_neg={self.gamma_neg}')
