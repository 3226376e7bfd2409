from typing import Optional, Tuple, Union

import torch
from mmpretrain.registry import MODELS

from .epr_loss import checked_expected_positives
from .gpr import gpr_loss
from .gr_loss import GRLoss
from .value_and_grad import pseudo_label_indicators

Schedule = Union[float, Tuple[float, float]]


@MODELS.register_module()
class GPRLoss(GRLoss):
    """Generalized pseudo-label robust (GPR) loss of AEVLP (Tran et al.,
    ICCV 2025).

    :class:`GRLoss`, with its epoch schedules of beta and alpha, extended
    with weighted terms on a teacher's positive and negative pseudo-labels
    and a weighted expected-positive regulariser. The loss is
    :func:`~spml_mm.models.losses.gpr.gpr_value_and_grad`
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

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives in 0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 1 positive, -1 negative pseudo-label, 0 none.
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels). Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads; not used.
        """
        self._warn_without_schedule()
        positive, negative = pseudo_label_indicators(pseudo_label, target)
        low, high = self.pseudo_weight_range
        return gpr_loss(cls_score, target, positive, negative,
                        self._k_now['w'], self._k_now['b'],
                        self._v_now['mu'], self._v_now['sigma'],
                        self._gr_q[1], self._gr_q[2], low, high,
                        self.pseudo_positive_target, self.reg_weight,
                        self.expected_positives, observed_negative)
