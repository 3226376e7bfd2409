"""The unified SPML loss framework of the GR paper (Sec. 3.3, Table 1).

Every entry of the (B, C) logit matrix costs

    ``s * L1(z) + (1 - s) * v(p) * [k(p) * L2(z) + (1 - k(p)) * L3(z)]``

with ``s`` 1 on the observed positive and 0 elsewhere, and the loss is the
mean over B x C. ``k(p)`` is the soft pseudo-label of an unobserved entry
(the chance that it is a missed positive), ``v(p)`` its weight, ``L1`` the
loss of the observed positive, ``L2`` and ``L3`` the losses of an unobserved
entry taken as positive and as negative; an observed negative of partial
labels costs ``L1(-z)``, the positive's loss with p and 1 - p swapped
(``-log(1 - p)`` for ``L1 = -log p``). ``k`` and ``v`` read
the probabilities ``p = sigmoid(z)`` detached from the graph. Each component
is a small function chosen by name in the config; the paper's Table 1 columns
are the entries of :data:`PRESETS`.

This module holds the framework's parts: the components, the presets, the
checks of their arguments, :func:`unified_spml_loss` and
:class:`ComponentLoss`, the module of given components with their epoch
schedules, under both :class:`~.unified_spml_loss.UnifiedSPMLLoss` (any
components, by preset) and :class:`~.gr.GRLoss` (GR's).
"""
import inspect
import logging
import math
from functools import partial
from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.logging import print_log

from ..epoch_scheduled import EpochScheduled, schedule_at
from .base import BaseSPMLLoss


# --- k(p): soft pseudo-label of an unobserved entry ------------------------


def k_logistic(p: torch.Tensor, w, b) -> torch.Tensor:
    """GR's ``k(p; beta) = sigmoid(w * p + b)``, paper Eq. 7."""
    return torch.sigmoid(w * p + b)


def k_constant(p: torch.Tensor, value: float) -> torch.Tensor:
    """The same pseudo-label everywhere (0: assume negative)."""
    return torch.full_like(p, value)


def k_threshold(p: torch.Tensor, tau: float) -> torch.Tensor:
    """Hard pseudo-labeling: 1 where ``p > tau``, else 0 (SPLC, EM)."""
    return (p > tau).to(p.dtype)


# --- v(p): weight of an unobserved entry ------------------------------------


def v_gaussian(p: torch.Tensor, mu: float, sigma: float) -> torch.Tensor:
    """GR's ``v(p; alpha) = exp(-(p - mu)^2 / (2 sigma^2))``, paper Eq. 11."""
    return torch.exp(-(p - mu)**2 / (2 * sigma**2))


def v_constant(p: torch.Tensor, weight: float) -> torch.Tensor:
    """The same weight everywhere (EM's alpha, WAN's lambda)."""
    return torch.full_like(p, weight)


def v_threshold(p: torch.Tensor,
                tau: float,
                below: float = 1.,
                above: float = 0.) -> torch.Tensor:
    """``below`` where ``p <= tau`` and ``above`` elsewhere (EN ignores the
    confident unobserved entries with ``above=0``)."""
    return torch.where(p > tau, above, below).to(p.dtype)


# --- L(z): per-entry loss terms, stable in the logits ----------------------


def log_loss(z: torch.Tensor) -> torch.Tensor:
    """``-log p``: BCE on a positive."""
    return -F.logsigmoid(z)


def log_neg_loss(z: torch.Tensor) -> torch.Tensor:
    """``-log(1 - p)``: BCE on a negative."""
    return -F.logsigmoid(-z)


def gce_loss(z: torch.Tensor, q: float) -> torch.Tensor:
    """``(1 - p^q) / q``, paper Eq. 14 (BCE as q -> 0, MAE at q = 1)."""
    return -torch.expm1(q * F.logsigmoid(z)) / q


def gce_neg_loss(z: torch.Tensor, q: float) -> torch.Tensor:
    """``(1 - (1 - p)^q) / q``, paper Eq. 14's L3."""
    return gce_loss(-z, q)


def neg_entropy_loss(z: torch.Tensor) -> torch.Tensor:
    """``p log p + (1 - p) log(1 - p)`` = ``-H(p)``: EM's unobserved term."""
    return torch.sigmoid(z) * F.logsigmoid(z) + torch.sigmoid(
        -z) * F.logsigmoid(-z)


def hill_loss(z: torch.Tensor, lam: float = 1.5) -> torch.Tensor:
    """Hill's negative loss ``(lam - p) p^2`` (Zhang et al. 2021)."""
    p = torch.sigmoid(z)
    return (lam - p) * p**2


def focal_margin_loss(z: torch.Tensor,
                      margin: float = 1.,
                      gamma: float = 2.) -> torch.Tensor:
    """Focal margin positive loss ``-(1 - p_m)^gamma log p_m`` with
    ``p_m = sigmoid(z - margin)`` (Zhang et al. 2021)."""
    return -torch.sigmoid(margin - z)**gamma * F.logsigmoid(z - margin)


K_FUNCTIONS: Dict[str, Callable] = dict(
    logistic=k_logistic, constant=k_constant, threshold=k_threshold)
V_FUNCTIONS: Dict[str, Callable] = dict(
    gaussian=v_gaussian, constant=v_constant, threshold=v_threshold)
LOSS_TERMS: Dict[str, Callable] = dict(
    log=log_loss,
    log_neg=log_neg_loss,
    gce=gce_loss,
    gce_neg=gce_neg_loss,
    neg_entropy=neg_entropy_loss,
    hill=hill_loss,
    focal_margin=focal_margin_loss)

#: The columns of the GR paper's Table 1 as component configs. ``None`` for
#: L2 or L3 means the term is absent (the paper's "undefined").
PRESETS: Dict[str, dict] = dict(
    # AN: every unobserved entry is a negative
    an=dict(
        k=dict(type='constant', value=0.),
        v=dict(type='constant', weight=1.),
        l1=dict(type='log'),
        l2=None,
        l3=dict(type='log_neg')),
    # EN (Verelst et al. 2023): confident unobserved entries are ignored,
    # the others are negatives; the paper's ranking becomes a threshold
    en=dict(
        k=dict(type='constant', value=0.),
        v=dict(type='threshold', tau=0.5, below=1., above=0.),
        l1=dict(type='log'),
        l2=None,
        l3=dict(type='log_neg')),
    # EM (Zhou et al. 2022): maximise the entropy of unobserved entries with
    # weight alpha; APL's pseudo-negatives are per-sample state (EMLoss)
    em=dict(
        k=dict(type='constant', value=1.),
        v=dict(type='constant', weight=0.1),
        l1=dict(type='log'),
        l2=dict(type='neg_entropy'),
        l3=None),
    # Hill (Zhang et al. 2021), lambda 1.5
    hill=dict(
        k=dict(type='constant', value=0.),
        v=dict(type='constant', weight=1.),
        l1=dict(type='log'),
        l2=None,
        l3=dict(type='hill', lam=1.5)),
    # Focal margin + SPLC (Zhang et al. 2021): unobserved entries above tau
    # are taken as positives; release defaults tau 0.6, margin 1, gamma 2
    splc=dict(
        k=dict(type='threshold', tau=0.6),
        v=dict(type='constant', weight=1.),
        l1=dict(type='focal_margin', margin=1., gamma=2.),
        l2=dict(type='focal_margin', margin=1., gamma=2.),
        l3=dict(type='hill', lam=1.5)),
    # GR loss, the release defaults
    gr=dict(
        k=dict(type='logistic', w=(0., 2.), b=(-2., -2.)),
        v=dict(type='gaussian', mu=(0.5, 0.8), sigma=(2., 0.5)),
        l1=dict(type='log'),
        l2=dict(type='gce', q=0.01),
        l3=dict(type='gce_neg', q=1.)))

# valid range of a component argument, checked on every schedule end point
_DOMAINS = dict(
    q=(lambda x: x > 0, '> 0'),
    # v's centre is a probability
    mu=(lambda x: 0 <= x <= 1, 'in [0, 1]'),
    sigma=(lambda x: x > 0, '> 0'),
    tau=(lambda x: 0 <= x <= 1, 'in [0, 1]'),
    gamma=(lambda x: x >= 0, '>= 0'))


def unified_spml_loss(cls_score: torch.Tensor,
                      target: torch.Tensor,
                      k: Callable,
                      v: Callable,
                      l1: Callable,
                      l2: Optional[Callable] = None,
                      l3: Optional[Callable] = None,
                      observed_negative: Optional[torch.Tensor] = None
                      ) -> torch.Tensor:
    """The framework's loss for given components (paper Eq. 4-5).

    An observed negative costs ``l1(-z)``.

    Args:
        cls_score (torch.Tensor): Logits z, shape (B, C).
        target (torch.Tensor): Observed positives s in 0/1, shape (B, C).
        k (Callable): Soft pseudo-label k(p), a function of the detached
            probabilities (B, C).
        v (Callable): Weight v(p) of unobserved entries, a function of the
            detached probabilities.
        l1 (Callable): Loss L1 of the observed positive, a function of z.
        l2 (Callable, optional): Loss L2 of an unobserved entry taken as
            positive; None for no term. Defaults to None.
        l3 (Callable, optional): Loss L3 of an unobserved entry taken as
            negative; None for no term. Defaults to None.
        observed_negative (torch.Tensor, optional): Boolean mask (B, C) of
            the observed negatives of partial labels. Defaults to None.

    Returns:
        torch.Tensor: Mean over B x C, float32.
    """
    z = cls_score.float()
    p = torch.sigmoid(z).detach()
    k_p = k(p)
    unobserved = torch.zeros_like(z)
    if l2 is not None:
        unobserved = unobserved + k_p * l2(z)
    if l3 is not None:
        unobserved = unobserved + (1 - k_p) * l3(z)
    loss = torch.where(target > 0, l1(z), v(p) * unobserved)
    if observed_negative is not None:
        loss = torch.where(observed_negative, l1(-z), loss)
    return loss.mean()


def _split_component(
        cfg: Optional[dict],
        table: Dict[str, Callable],
        name: str,
        keys: Optional[Dict[str, str]] = None
) -> Optional[Tuple[Callable, dict]]:
    """Look a component config up and check its arguments and their ranges;
    a message names an argument ``<name>.<arg>`` or, where ``keys`` maps
    that to the key the user wrote (a preset's, e.g. GR's ``q3``), that key.
    """
    if cfg is None:
        return None
    cfg = dict(cfg)
    kind = cfg.pop('type', None)
    if kind not in table:
        raise ValueError(f'{name}.type must be one of {sorted(table)}, got '
                         f'{kind!r}')
    func = table[kind]
    try:
        inspect.signature(func).bind(None, **cfg)
    except TypeError as err:
        raise ValueError(f'{name}={dict(type=kind, **cfg)}: {err}') from None
    for arg, value in cfg.items():
        key = (keys or {}).get(f'{name}.{arg}', f'{name}.{arg}')
        pair = isinstance(value, (tuple, list))
        ends = tuple(value) if pair else (value, )
        if pair and len(ends) != 2 or not all(
                isinstance(x, (int, float)) for x in ends):
            raise ValueError(f'{key} must be a number or a (start, end) '
                             f'pair, got {value!r}')
        if not all(math.isfinite(x) for x in ends):
            raise ValueError(f'{key} must be finite, got {value!r}')
        check, valid = _DOMAINS.get(arg, (lambda x: True, ''))
        if not all(check(x) for x in ends):
            raise ValueError(f'{key} must be {valid} (at every point of its '
                             f'schedule), got {value!r}')
    return func, cfg


def _at(args: dict, progress: float) -> dict:
    """Values of the arguments at ``progress`` along their linear schedules.
    """
    return {arg: schedule_at(value, progress) for arg, value in args.items()}


class ComponentLoss(BaseSPMLLoss, EpochScheduled):
    """The framework's loss of given components (:func:`unified_spml_loss`),
    with the epoch schedules of k's and v's arguments and the learned k of
    ``trainable_k``.

    A ``(start, end)`` pair makes an argument of ``k`` or ``v`` follow a
    linear epoch schedule, set by :meth:`set_epoch` (called by
    ``SPMLEpochHook``) with the GR release's semantics: k's arguments use
    ``epoch / T``, v's ``(epoch + 1) / T`` (0-based epoch). Before the first
    call they sit at their start values; :attr:`k_now` and :attr:`v_now`
    give them.

    Args:
        parts (dict): The components ``k``, ``v``, ``l1``, ``l2`` and
            ``l3``, each a config as in :data:`PRESETS` (None for no L2 or
            L3 term).
        trainable_k (bool): Learn k's arguments per class (``logistic``
            only), see :class:`~.unified_spml_loss.UnifiedSPMLLoss`.
            Defaults to False.
        num_classes (int, optional): Number of classes C; required with
            ``trainable_k``. Defaults to None.
    """

    #: The keys a subclass's users write for the components' arguments
    #: (``'l3.q': 'q3'``), which refusals name.
    USER_KEYS: Dict[str, str] = {}

    def __init__(self,
                 parts: dict,
                 trainable_k: bool = False,
                 num_classes: Optional[int] = None):
        super().__init__()
        keys = self.USER_KEYS
        self.k_func, self.k_args = _split_component(parts['k'], K_FUNCTIONS,
                                                    'k', keys)
        self.v_func, self.v_args = _split_component(parts['v'], V_FUNCTIONS,
                                                    'v', keys)
        self.terms = {}
        for name in ('l1', 'l2', 'l3'):
            term = _split_component(parts[name], LOSS_TERMS, name, keys)
            if term and any(
                    isinstance(x, (tuple, list)) for x in term[1].values()):
                raise ValueError(f'{name} takes fixed arguments; only k and '
                                 'v follow epoch schedules')
            self.terms[name] = term and partial(term[0], **term[1])
        self.trainable_k = trainable_k
        if trainable_k:
            if self.k_func is not k_logistic:
                raise ValueError(
                    "trainable_k needs k=dict(type='logistic', ...)")
            if not (isinstance(num_classes, int) and num_classes > 0):
                raise ValueError(
                    f'{keys.get("trainable_k", "trainable_k")} needs '
                    f'num_classes (an int > 0), got {num_classes!r}')
            self.k_params = nn.ParameterDict({
                arg: nn.Parameter(torch.full((num_classes, ), float(start)))
                for arg, start in _at(self.k_args, 0.).items()
            })
        self._k_now = _at(self.k_args, 0.)
        self._v_now = _at(self.v_args, 0.)
        # warn at the first training forward if nothing moves the schedules
        self._expect_set_epoch = any(
            isinstance(x, (tuple, list)) and x[0] != x[1]
            for x in [*self.k_args.values(), *self.v_args.values()])

    @property
    def k_now(self) -> Dict[str, float]:
        """k's arguments at the current epoch, by name (the scheduled ones;
        learned ones are ``k_params``)."""
        return dict(self._k_now)

    @property
    def v_now(self) -> Dict[str, float]:
        """v's arguments at the current epoch, by name."""
        return dict(self._v_now)

    def set_epoch(self, epoch: int, max_epochs: int) -> Dict[str, float]:
        """Move the scheduled arguments of k and v to a training epoch.

        Args:
            epoch (int): 0-based epoch about to run (``runner.epoch``).
            max_epochs (int): Number of training epochs T.

        Returns:
            dict: The arguments of k and v now (learned ones as their mean
            over classes), by name, for logging; v's take a ``v_`` prefix
            where k has the same name.
        """
        if not 0 <= epoch < max_epochs:
            raise ValueError(f'epoch must be in [0, max_epochs={max_epochs})'
                             f', got {epoch}')
        self._k_now = _at(self.k_args, epoch / max_epochs)
        self._v_now = _at(self.v_args, (epoch + 1) / max_epochs)
        self._expect_set_epoch = False
        values = dict(self._k_now)
        for arg, value in self._v_now.items():
            values[arg if arg not in values else f'v_{arg}'] = value
        if self.trainable_k:
            values.update({
                arg: float(param.detach().mean())
                for arg, param in self.k_params.items()
            })
        return values

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        self.warn_without_schedule()
        k_args = dict(self.k_params) if self.trainable_k else self._k_now
        return unified_spml_loss(
            z,
            s,
            k=partial(self.k_func, **k_args),
            v=partial(self.v_func, **self._v_now),
            observed_negative=n,
            **self.terms)

    def warn_without_schedule(self) -> None:
        """Warn once, at the first training step, where the schedules would
        move but :meth:`set_epoch` was never called."""
        if self._expect_set_epoch and self.training:
            self._expect_set_epoch = False  # warn once
            print_log(
                f'{type(self).__name__} has epoch schedules but set_epoch '
                "was never called: add dict(type='SPMLEpochHook') to "
                'custom_hooks, or they stay at their start values',
                logger='current',
                level=logging.WARNING)
