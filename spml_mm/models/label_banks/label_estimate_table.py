import functools
import math
from typing import Dict, Optional, Sequence, Tuple

import torch
from mmengine import dist
from mmpretrain.registry import MODELS

from .base_label_bank import BaseLabelBank

#: Adam modes of the table: the release's dense update of every row at each
#: step, or an update of the batch's rows only, each with its own step count.
ADAM_MODES = ('dense', 'per_row')


def logit(p: float) -> float:
    return math.log(p / (1 - p))


@MODELS.register_module()
class LabelEstimateTable(BaseLabelBank):
    """ROLE's learned label estimates: an N x C table of logits, indexed by
    ``sample_idx``, with its own Adam optimizer.

    Set as the head's ``label_bank``, the table passes the batch's rows to
    :class:`ROLELoss` (``estimate_logits``) with ``step_estimates``, which
    applies one Adam step (no weight decay) to those rows given their
    gradient. The rows are initialised as in the release: uniform in logit
    space between ``logit(0.4)`` and ``logit(0.6)``, and ``logit(0.995)`` at
    the observed positives (``logit(0.005)`` at the observed negatives of
    partial labels; set when a row is first trained on; no row moves before
    that in either Adam mode).

    Adam (``adam``):

    - ``'dense'`` (default, the release): the table is one parameter of the
      release's Adam, so each step moves every row by its momentum, rows
      outside the batch included (their gradient is 0), with one global step
      count. One process only.
    - ``'per_row'``: only the batch's rows move, each with its own step
      count; a row's update depends only on the batches that contain it.
      Required with several processes: each rank steps the rows of its own
      samples, and :meth:`merge_ranks` (``SPMLSampleStateHook``, after every
      epoch) gives every rank each row and its Adam state from the rank that
      trained on it.

    The table is written by the loss in the training step
    (``WRITTEN_BY = 'loss'``). The table, its Adam state and the step counts
    are buffers: checkpoints carry them and ``--resume`` restores them
    (:class:`BaseLabelBank`). Memory: 12 bytes per entry
    (logits and the two Adam moments, float32) and 5 per sample.

    Args:
        num_classes (int): Number of classes C (set by the head).
        lr (float): Learning rate of the table, > 0; the release uses 10x
            the classifier's.
        adam (str): ``'dense'`` or ``'per_row'`` (above). Defaults to
            ``'dense'``.
        betas (tuple): Adam's (beta1, beta2). Defaults to ``(0.9, 0.999)``.
        eps (float): Adam's epsilon. Defaults to 1e-8.
        num_samples (int): Number of training samples N; 0 leaves the table
            to be sized by ``SPMLSampleStateHook``. Defaults to 0.

    Example:
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048,
        ...             loss=dict(type='ROLELoss', expected_positives=1.5),
        ...             label_bank=dict(type='LabelEstimateTable', lr=1e-4))
    """

    ENTRY_KEYS = ('estimate_logits', 'step_estimates')
    WRITTEN_BY = 'loss'
    NAME = 'label estimate table'

    def __init__(self,
                 num_classes: int,
                 lr: float,
                 adam: str = 'dense',
                 betas: Sequence[float] = (0.9, 0.999),
                 eps: float = 1e-8,
                 num_samples: int = 0):
        super().__init__(num_classes)
        if not isinstance(lr, (int, float)) or lr <= 0:
            raise ValueError(f'lr must be a number > 0, got {lr!r}')
        if adam not in ADAM_MODES:
            raise ValueError(f'adam must be one of {ADAM_MODES}, got '
                             f'{adam!r}')
        self.lr, self.adam, self.eps = lr, adam, eps
        self.betas = tuple(betas)
        for name in ('estimate_logits', 'exp_avg', 'exp_avg_sq'):
            self.register_buffer(name, torch.zeros(0, num_classes))
        self.register_buffer('steps', torch.zeros(0, dtype=torch.int32))
        self.register_buffer('seen', torch.zeros(0, dtype=torch.bool))
        # rows this rank stepped since the last merge (not saved: a run
        # resumes at an epoch boundary, after a merge)
        self.register_buffer('trained', torch.zeros(0, dtype=torch.bool),
                             persistent=False)
        # the global step of dense Adam (a buffer, so it resumes)
        self.register_buffer('dense_steps', torch.zeros((),
                                                        dtype=torch.long))
        self.allocate(num_samples)

    @property
    def row_buffers(self) -> Tuple[str, ...]:
        """The table, its Adam state, step counts and first-seen flags, and
        the rows trained since the last merge (not saved: a run resumes at
        an epoch boundary, after a merge)."""
        return ('estimate_logits', 'exp_avg', 'exp_avg_sq', 'steps', 'seen',
                'trained')

    def init_rows(self) -> None:
        """Draw the estimates uniform in ``[logit(0.4), logit(0.6)]``."""
        self.estimate_logits.uniform_(logit(0.4), logit(0.6))

    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, object]:
        """The batch's estimate logits and the step of their rows.

        Rows trained on for the first time get ``logit(0.995)`` at their
        observed positives and ``logit(0.005)`` at their observed negatives.
        """
        index = self.rows(index)
        if self.adam == 'dense' and dist.get_world_size() > 1:
            raise RuntimeError(
                "LabelEstimateTable(adam='dense') moves every row at every "
                'step and cannot be split across processes; set '
                "model.head.label_bank.adam='per_row' for distributed "
                'training.')
        device = self.estimate_logits.device
        rows = self.estimate_logits[index]
        first = ~self.seen[index][:, None]
        rows = torch.where(first & (target.to(device) > 0), logit(0.995),
                           rows)
        if observed_negative is not None:
            rows = torch.where(first & observed_negative.to(device),
                               logit(0.005), rows)
        self.estimate_logits[index] = rows
        self.seen.index_fill_(0, index, True)  # a scalar fill: no copy
        return dict(estimate_logits=rows,
                    step_estimates=functools.partial(self.step, index))

    @torch.no_grad()
    def step(self, index: torch.Tensor, grad: torch.Tensor) -> None:
        """One Adam step given the gradient of rows ``index`` (B, C)."""
        beta1, beta2 = self.betas
        grad = grad.to(self.estimate_logits.dtype)
        self.trained.index_fill_(0, index, True)
        if self.adam == 'dense':
            full = torch.zeros_like(self.estimate_logits)
            full[index] = grad
            self.dense_steps += 1
            self.exp_avg.mul_(beta1).add_(full, alpha=1 - beta1)
            self.exp_avg_sq.mul_(beta2).addcmul_(full, full, value=1 - beta2)
            step = self.dense_steps.double()
            self.estimate_logits.sub_(self._update(self.exp_avg,
                                                   self.exp_avg_sq, step))
            return
        steps = self.steps[index] + 1
        self.steps[index] = steps
        exp_avg = self.exp_avg[index].mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq = self.exp_avg_sq[index].mul_(beta2).addcmul_(
            grad, grad, value=1 - beta2)
        self.exp_avg[index] = exp_avg
        self.exp_avg_sq[index] = exp_avg_sq
        self.estimate_logits[index] -= self._update(
            exp_avg, exp_avg_sq, steps.double()[:, None])

    def _update(self, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                step: torch.Tensor) -> torch.Tensor:
        """Adam's step ``lr m_hat / (sqrt(v_hat) + eps)`` (torch's form)."""
        beta1, beta2 = self.betas
        correction1 = (1 - beta1**step).to(exp_avg.dtype)
        correction2 = (1 - beta2**step).sqrt().to(exp_avg.dtype)
        denom = (exp_avg_sq.sqrt() / correction2).add_(self.eps)
        return exp_avg / denom * (self.lr / correction1)

    @torch.no_grad()
    def merge_ranks(self) -> None:
        """Give every rank each row, with its Adam state, from the rank
        that trained on it since the last merge (the lowest such rank for a
        padded duplicate)."""
        world = dist.get_world_size()
        trained, self.trained = self.trained, torch.zeros_like(self.trained)
        if world == 1:
            return
        owner = torch.where(trained, dist.get_rank(), world)
        dist.all_reduce(owner, op='min')
        mine, owned = owner == dist.get_rank(), owner < world
        for name in self.row_buffers[:-1]:  # all but `trained`
            buf = getattr(self, name)
            shape = (-1, ) + (1, ) * (buf.dim() - 1)
            part = torch.where(mine.view(shape), buf, torch.zeros_like(buf))
            if buf.dtype == torch.bool:
                part = part.to(torch.int32)
            dist.all_reduce(part)
            buf.copy_(torch.where(owned.view(shape), part.to(buf.dtype), buf))
