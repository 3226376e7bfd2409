import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
from mmpretrain.registry import MODELS

from ..label_states import PSEUDO_POSITIVE
from .value_and_grad import differentiable, indicator


def _log_offset_sum_exp(offset: float, x: torch.Tensor, weight: torch.Tensor,
                        excluded: torch.Tensor
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """``log(offset + sum_k weight_k exp(x_k))`` per row, and the summands
    over the sum, ``weight_k exp(x_k) / (offset + sum)``.

    The exponentials are shifted by the row's largest ``x_k`` among the
    entries of nonzero weight (``excluded`` is 1 on those of weight 0) or
    by ``log(offset)`` if larger, so none overflows and the largest term is
    1. Terms below ``e^-80`` of it are counted as ``e^-80`` (the sum moves
    by less than 1e-32 relative), which keeps ``exp`` off its slow
    underflow path.
    """
    shift = torch.add(x, excluded, alpha=-_EXCLUDED).amax(1, keepdim=True)
    shift.clamp_(min=math.log(offset))
    terms = torch.sub(x, shift).clamp_(-80., 0.).exp_().mul_(weight)
    total = terms.sum(1, keepdim=True).add_(
        torch.exp(math.log(offset) - shift))
    return total.log().add_(shift), terms.div_(total)


#: how far below the row's logits the shift pushes an entry of weight 0
_EXCLUDED = 1e30


def _lower_gram(a: torch.Tensor) -> torch.Tensor:
    """The lower triangle of ``a a^T`` (the upper is left unset), from the
    halves of a's rows: three quarters of the full product's arithmetic,
    for matrices large enough that arithmetic outweighs the extra calls.
    The Cholesky factorization reads the lower triangle only."""
    if len(a) < 128:
        return a @ a.T
    half = len(a) // 2
    gram = a.new_empty(len(a), len(a))
    torch.mm(a[:half], a[:half].T, out=gram[:half, :half])
    torch.mm(a[half:], a.T, out=gram[half:])
    return gram


def high_rank_value_and_grad(probs: torch.Tensor, delta: float
                             ) -> Tuple[torch.Tensor, torch.Tensor]:
    """OPML's high-rank term ``R = -sum_i log(sigma_i(F)^2 + delta)``.

    The sum over the ``min(B, C)`` singular values of F is ``-log det(G +
    delta I)`` with the smaller Gram matrix G (``F^T F`` or ``F F^T``), taken
    from its Cholesky factor L; ``dR/dF = -2 F (F^T F + delta I)^-1`` (or
    ``-2 (F F^T + delta I)^-1 F``), by triangular solves with L; nothing is
    read back from the device. Computed in float64: the Gram matrix
    squares F's condition number. Identical rows keep a finite gradient.

    Args:
        probs (torch.Tensor): F, shape (B, C).
        delta (float): delta > 0.

    Returns:
        tuple: R (a scalar) and dR/dF (B, C), in the dtype of F.
    """
    f = probs.double()
    tall = f.size(0) >= f.size(1)
    gram = _lower_gram(f.T if tall else f)
    gram.diagonal().add_(delta)
    # G + delta I is positive definite: cholesky_ex skips the check that
    # would read the factorization's status back from the device
    chol = torch.linalg.cholesky_ex(gram).L
    value = -2 * chol.diagonal().log().sum()
    # (G + delta I)^-1 applied by two triangular solves, which have no
    # status to read either (cholesky_inverse checks one)
    solve = torch.linalg.solve_triangular
    if tall:  # F L^-T L^-1
        grad = solve(chol, solve(chol.T, f, upper=True, left=False),
                     upper=False, left=False)
    else:  # L^-T L^-1 F
        grad = solve(chol.T, solve(chol, f, upper=False), upper=True)
    return value.to(probs.dtype), grad.mul_(-2).to(probs.dtype)


def opml_value_and_grad(z: torch.Tensor,
                        y: torch.Tensor,
                        alpha: float = 1.,
                        beta: float = 1.,
                        rank_weight: float = 0.,
                        rank_delta: float = 1e-2,
                        soft_weight: Optional[torch.Tensor] = None,
                        n: Optional[torch.Tensor] = None,
                        soft_positive_sum: bool = True
                        ) -> Tuple[torch.Tensor, torch.Tensor]:
    """One-pair loss, mean over the batch, plus ``lambda R(sigmoid(z))``::

        L = N + P      N = log(alpha + sum_k (1 - y_k) e^{z_k})
                       P = log(beta + sum_k y_k e^{-z_k})
        dL/dz_k = (1 - y_k) e^{z_k - N} - y_k e^{-z_k - P}

    With 0/1 labels y this is the
    full-label form (P the positives, N the negatives) and, with one
    positive per row, the single-positive form; soft labels weigh an entry
    into both sums (y is a constant). ``alpha = beta = 1`` is ZLPR. With
    ``soft_weight`` (OPML-SP), an entry of ``y = 0`` that is not an observed
    negative takes the soft label ``y_k = p_k AP_k^gamma``, p the
    probability of this forward pass, held constant. Its summand in P is
    then ``y_k e^{-z_k} = AP_k^gamma (1 - p_k)``, which stays near
    ``AP_k^gamma`` however low ``p_k`` is: P pulls every unobserved logit
    up. ``soft_positive_sum=False`` keeps the soft labels out of P (their
    only effect is the weight ``1 - y_k`` in N).

    Args:
        z (torch.Tensor): Logits, shape (B, C), float32.
        y (torch.Tensor): Labels in [0, 1], shape (B, C).
        alpha (float): alpha > 0. Defaults to 1.
        beta (float): beta > 0. Defaults to 1.
        rank_weight (float): lambda of :func:`high_rank_value_and_grad`;
            0 leaves it out. Defaults to 0.
        rank_delta (float): Its delta. Defaults to 1e-2.
        soft_weight (torch.Tensor, optional): ``AP_k^gamma`` per class (C,)
            of the soft labels. Defaults to None (y as given).
        n (torch.Tensor, optional): Boolean mask (B, C) of the observed
            negatives of partial labels, kept at ``y = 0``. Defaults to None.
        soft_positive_sum (bool): Whether soft labels enter P as well as
            N. Defaults to True.

    Returns:
        tuple: The loss (a scalar) and its gradient (B, C).
    """
    y = y.to(z.dtype)
    p = torch.sigmoid(z) if rank_weight > 0 or soft_weight is not None \
        else None
    hard = y
    if soft_weight is not None:
        soft = p * soft_weight
        # y where it is 1 (lerp is exact at 0 and 1) or an observed negative
        y = torch.lerp(soft, y, y) if n is None else torch.where(
            (y > 0) | n, y, soft)
    if soft_positive_sum:
        hard = y
    # weight 1 - y is 0 where y = 1, weight y where y = 0
    negative, d_negative = _log_offset_sum_exp(
        alpha, z, 1 - y, indicator(torch.eq, y, 1, y))
    positive, d_positive = _log_offset_sum_exp(
        beta, -z, hard, indicator(torch.eq, hard, 0, hard))
    value = (negative + positive).mean()
    grad = d_negative.sub_(d_positive).div_(len(z))
    if rank_weight > 0:
        rank, d_rank = high_rank_value_and_grad(p, rank_delta)
        value = value + rank_weight * rank
        # dR/dz = dR/dp p (1 - p), with p (1 - p) = p - p^2
        grad.addcmul_(d_rank, torch.addcmul(p, p, p, value=-1),
                      value=rank_weight)
    return value, grad


opml_loss = differentiable(opml_value_and_grad)
high_rank_penalty = differentiable(high_rank_value_and_grad)


@MODELS.register_module()
class OPMLLoss(nn.Module):
    """One-pair multi-label loss with OPML's extensions.

    The loss is :func:`opml_value_and_grad` (docs/methods/opml.md).

    ``a`` and ``b`` set the offsets ``alpha = a / (1 - a)`` and ``beta =
    b / (1 - b)`` of :func:`opml_loss`; ``a = b = 0.5`` is ZLPR. The same
    module trains on single positives (the observed matrix) and on full
    labels (``train_dataloader.dataset.full_labels=True``), the paper's two
    settings, since the full-label form with one positive per row is the
    single-positive form.

    Extensions, each off by default:

    - High-rank regularization ``R = -lambda * sum_i log(sigma_i(F)^2 +
      delta)`` on the batch probability matrix ``F = sigmoid(z)``, added to
      the loss when ``rank_weight > 0``. Under distributed training F is each
      rank's own batch.
    - Soft labels (``soft_labels=True``): an unobserved entry takes
      ``y_nk = p_nk * AP_k^gamma``, p the detached probability of the
      current forward pass and ``AP_k`` the class's AP of the training-set
      scores against the observed labels at the last epoch end. The AP comes
      from :class:`OPMLLabelBank` (``class_ap``), filled by
      :class:`SPMLPseudoLabelHook` with the :class:`OPMLLabelUpdater`. Until
      the first epoch end has scored the training set the bank holds no AP
      (``-1``) and unobserved entries keep ``y = 0``: the first epoch trains
      plain OPML.
    - Label correction: entries the bank marks as positive pseudo-labels
      (``pseudo_label == 1``, :class:`OPMLLabelUpdater`) count as positives,
      ``y = 1``, like the observed positive.

    Args:
        a (float): a in (0, 1), giving alpha = a / (1 - a). Defaults to 0.5.
        b (float): b in (0, 1), giving beta = b / (1 - b). Defaults to 0.5.
        rank_weight (float): lambda >= 0 of the high-rank regularization;
            0 turns it off. Defaults to 0.
        rank_delta (float): delta > 0 of the high-rank regularization.
            Defaults to 1e-2.
        soft_labels (bool): Give unobserved entries the soft labels
            ``p * AP_k^gamma``; needs the head's
            ``label_bank=dict(type='OPMLLabelBank')``. Defaults to False.
        gamma (float): Exponent gamma >= 0 of ``AP_k`` in the soft labels.
            Defaults to 1.
        soft_positive_sum (bool): Soft labels weigh an unobserved entry
            into the positive sum too (the definition). Its summand there is
            ``AP_k^gamma (1 - p)``, so every unobserved logit is pulled up,
            the more the lower it is; False keeps soft labels to the
            negative sum (weight ``1 - y``). Defaults to True.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='OPMLLoss', a=0.5, b=0.5, rank_weight=1e-3,
        ...               soft_labels=True, gamma=1.),
        ...     label_bank=dict(type='OPMLLabelBank')))
        >>> custom_hooks = [dict(
        ...     type='SPMLPseudoLabelHook',
        ...     updater=dict(type='OPMLLabelUpdater', zeta=0.5,
        ...                  correction_start_epoch=2))]
    """

    def __init__(self,
                 a: float = 0.5,
                 b: float = 0.5,
                 rank_weight: float = 0.,
                 rank_delta: float = 1e-2,
                 soft_labels: bool = False,
                 gamma: float = 1.,
                 soft_positive_sum: bool = True):
        super().__init__()
        for name, value in (('a', a), ('b', b)):
            if not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ValueError(f'{name} must be in (0, 1) (exclusive), got '
                                 f'{value!r}')
        if not isinstance(rank_weight, (int, float)) or not (
                0 <= rank_weight < float('inf')):
            raise ValueError('rank_weight (lambda) must be >= 0, got '
                             f'{rank_weight!r}')
        if not isinstance(rank_delta, (int, float)) or not (
                0 < rank_delta < float('inf')):
            raise ValueError('rank_delta (delta) must be > 0, got '
                             f'{rank_delta!r}')
        if not isinstance(gamma, (int, float)) or not (
                0 <= gamma < float('inf')):
            raise ValueError(f'gamma must be >= 0, got {gamma!r}')
        self.a = a
        self.b = b
        self.alpha = a / (1 - a)
        self.beta = b / (1 - b)
        self.rank_weight = rank_weight
        self.rank_delta = rank_delta
        self.soft_labels = soft_labels
        self.gamma = gamma
        self.soft_positive_sum = soft_positive_sum

    def forward(self,
                cls_score: torch.Tensor,
                target: torch.Tensor,
                pseudo_label: Optional[torch.Tensor] = None,
                class_ap: Optional[torch.Tensor] = None,
                observed_negative: Optional[torch.Tensor] = None,
                avg_factor: Optional[float] = None) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score (torch.Tensor): Logits, shape (B, C).
            target (torch.Tensor): Observed positives (or full labels) in
                0/1, shape (B, C).
            pseudo_label (torch.Tensor, optional): The label bank's states
                (B, C): 0 unlabelled, 1 corrected to positive.
            class_ap (torch.Tensor, optional): The bank's per-class AP (C,)
                in [0, 1], or -1 before the first epoch end.
            observed_negative (torch.Tensor, optional): Boolean mask (B, C)
                of observed negatives (partial labels): ``y = 0``, never
                corrected or soft-labelled. Defaults to None.
            avg_factor (float, optional): Passed by MMPretrain's
                multi-label heads (the batch size); not used: the loss
                keeps its paper's normalisation in any head.
        """
        label = target.float()
        if pseudo_label is not None:
            if pseudo_label.shape != target.shape:
                raise ValueError(
                    'pseudo_label must have the shape of the logits '
                    f'{tuple(cls_score.shape)}, got '
                    f'{tuple(pseudo_label.shape)}')
            corrected = indicator(torch.eq, pseudo_label, PSEUDO_POSITIVE,
                                  label)
            if observed_negative is not None:
                corrected.masked_fill_(observed_negative, 0.)
            label = label.maximum(corrected)
        if self.soft_labels:
            if class_ap is None:
                raise ValueError(
                    'OPMLLoss(soft_labels=True) needs the per-class AP of '
                    'the training set, which only SPMLLinearClsHead keeps: '
                    "use head type='SPMLLinearClsHead' with label_bank="
                    "dict(type='OPMLLabelBank') and add SPMLPseudoLabelHook "
                    "with updater=dict(type='OPMLLabelUpdater').")
            ap = class_ap.float().to(cls_score.device)
            soft_weight = torch.where(ap < 0, torch.zeros_like(ap),
                                      ap.clamp(max=1).pow(self.gamma))
            return opml_loss(cls_score, label, self.alpha, self.beta,
                             self.rank_weight, self.rank_delta, soft_weight,
                             observed_negative, self.soft_positive_sum)
        return opml_loss(cls_score, label, self.alpha, self.beta,
                         self.rank_weight, self.rank_delta)

    def extra_repr(self) -> str:
        return (f'a={self.a}, b={self.b}, rank_weight={self.rank_weight}, '
                f'rank_delta={self.rank_delta}, soft_labels='
                f'{self.soft_labels}, gamma={self.gamma}, '
                f'soft_positive_sum={self.soft_positive_sum}')
