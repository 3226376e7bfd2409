"""AEVLP's GPR: the generalized pseudo-label robust loss of Tran et al.
(ICCV 2025), its equation with its analytic gradient, written on GR's terms
(:func:`~spml_mm.models.losses.gr.gr_entries`), and its module
(:class:`GPRLoss`, GR's module with the pseudo-label terms).
"""
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS

from ..epoch_scheduled import Schedule
from .base import PseudoLabelLoss
from .epr_loss import checked_expected_positives, expected_positives_penalty
from .gr import GRLoss, gaussian_weight, gr_entries
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


@MODELS.register_module()
class GPRLoss(PseudoLabelLoss, GRLoss):
    """Generalized pseudo-label robust (GPR) loss of AEVLP (Tran et al.,
    ICCV 2025).

    :class:`~.gr.GRLoss`, with its epoch schedules of beta and alpha (read
    through :meth:`~.gr.GRLoss.schedule_now`), extended with weighted terms
    on a teacher's positive and negative pseudo-labels and a weighted
    expected-positive regulariser. The loss is :func:`gpr_value_and_grad`
    (docs/methods/teacher_pseudo_labels.md). The pseudo-labels come from the
    head's label bank (``pseudo_label`` of each batch; e.g.
    :class:`DAMPLabelBank`); without one, the loss is GR plus the
    regulariser. Defaults are the release's VOC config.

    Args:
        w (float | tuple): Slope of GR's k, ``(w0, wT)`` of beta. Defaults
            to ``(0., 2.)``; COCO, NUS-WIDE, CUB: ``(0., 10.)``.
        b (float | tuple): Intercept of k, ``(b0, bT)``. Defaults to
            ``(-2., -2.)``; COCO, NUS-WIDE, CUB: ``(-2., -8.)``.
        mu (float | tuple): Centre of GR's v, ``(mu0, muT)`` of alpha.
            Defaults to ``(0.5, 0.8)``.
        sigma (float | tuple): Width of v, ``(sigma0, sigmaT)``, > 0.
            Defaults to ``(2., 0.5)``.
        q2 (float): q2 of GR's L2. Defaults to 0.01.
        q3 (float): q3 of GR's L3. Defaults to 1 (1.5 on CUB).
        pseudo_weight_range (tuple): ``(lambda_2, lambda_1)``, the range to
            which the weight ``1 - v(p)`` of a positive pseudo-label is
            clipped, ``0 <= lambda_2 <= lambda_1 <= 1``. Defaults to
            ``(0.4, 0.7)``; COCO, NUS-WIDE ``(0.5, 0.7)``, CUB ``(0.2, 0.8)``.
        pseudo_positive_target (float): rho, the soft target of a positive
            pseudo-label, in [0, 1]. Defaults to 0.9.
        reg_weight (float): Weight of the expected-positive regulariser,
            >= 0. Defaults to 0.05; COCO, NUS-WIDE 0.001, CUB 0.01.
        expected_positives (float): k, the expected positives per image,
            > 0. Defaults to 1.5 (VOC); COCO 2.9, NUS-WIDE 1.9, CUB 31.4.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='GPRLoss'),
        ...     label_bank=dict(type='DAMPLabelBank',
        ...                     score_file='data/voc/teacher_clip.npz')))
        >>> default_hooks = dict(
        ...     epoch_schedule=dict(type='SPMLEpochHook'),
        ...     teacher_scores=dict(type='SPMLTeacherScoreHook'))
    """

    def __init__(self,
                 w: Schedule = (0., 2.),
                 b: Schedule = (-2., -2.),
                 mu: Schedule = (0.5, 0.8),
                 sigma: Schedule = (2., 0.5),
                 q2: float = 0.01,
                 q3: float = 1.,
                 pseudo_weight_range: Tuple[float, float] = (0.4, 0.7),
                 pseudo_positive_target: float = 0.9,
                 reg_weight: float = 0.05,
                 expected_positives: float = 1.5):
        super().__init__(w=w, b=b, mu=mu, sigma=sigma, q2=q2, q3=q3)
        if not (isinstance(pseudo_weight_range, (tuple, list))
                and len(pseudo_weight_range) == 2
                and 0 <= pseudo_weight_range[0] <= pseudo_weight_range[1]
                <= 1):
            raise ValueError(
                'pseudo_weight_range must be (lambda_2, lambda_1) with 0 <= '
                f'lambda_2 <= lambda_1 <= 1, got {pseudo_weight_range!r}')
        if not (isinstance(pseudo_positive_target, (int, float))
                and 0 <= pseudo_positive_target <= 1):
            raise ValueError('pseudo_positive_target (rho) must be in [0, 1]'
                             f', got {pseudo_positive_target!r}')
        if not (isinstance(reg_weight, (int, float))
                and 0 <= reg_weight < float('inf')):
            raise ValueError(
                f'reg_weight must be a float >= 0, got {reg_weight!r}')
        self.pseudo_weight_range = tuple(map(float, pseudo_weight_range))
        self.pseudo_positive_target = float(pseudo_positive_target)
        self.reg_weight = float(reg_weight)
        self.expected_positives = checked_expected_positives(
            expected_positives)

    def pseudo_label_loss(self, z: torch.Tensor, s: torch.Tensor,
                          positive: torch.Tensor, negative: torch.Tensor,
                          n: Optional[torch.Tensor]) -> torch.Tensor:
        self.warn_without_schedule()
        now = self.schedule_now()
        low, high = self.pseudo_weight_range
        return gpr_loss(z, s, positive, negative, now['w'], now['b'],
                        now['mu'], now['sigma'], self.q2, self.q3, low, high,
                        self.pseudo_positive_target, self.reg_weight,
                        self.expected_positives, n)
