"""The unified SPML loss framework of the GR paper (Sec. 3.3, Table 1) as a
registered module: any components, from a preset of Table 1.

Its parts (the components, the presets, their checks and schedules) are in
:mod:`~spml_mm.models.losses.components`; GR's components run fused, as GR's
own equation (:func:`~spml_mm.models.losses.gr.gr_loss`).
"""
import copy
from typing import Optional

import torch
from mmpretrain.registry import MODELS

# the framework's loss of given components is exported with its module
from .components import (PRESETS, ComponentLoss, gce_loss,  # noqa: F401
                         gce_neg_loss, k_logistic, log_loss,
                         unified_spml_loss, v_gaussian)
from .gr import gr_loss


@MODELS.register_module()
class UnifiedSPMLLoss(ComponentLoss):
    """The GR paper's unified SPML loss: pluggable k, v, L1, L2, L3 (Table 1).

    ``s * L1 + (1 - s) * v(p) * [k(p) L2 + (1 - k(p)) L3]`` averaged over
    B x C, with ``k`` and ``v`` computed from detached probabilities. A
    component is a dict naming a function and its arguments; a ``(start,
    end)`` pair makes an argument of ``k`` or ``v`` follow a linear epoch
    schedule, set by :meth:`set_epoch` (called by ``SPMLEpochHook``) with the
    GR release's semantics: k's arguments use ``epoch / T``, v's
    ``(epoch + 1) / T`` (0-based epoch). Before the first call they sit at
    their start values. GR's components (``logistic`` k, ``gaussian`` v,
    ``log`` or ``gce`` L1, ``gce`` L2, ``gce_neg`` L3, with any arguments)
    are computed by :func:`~.gr.gr_value_and_grad`, GR's equation with its
    analytic gradient; every other combination, and GR's with
    ``trainable_k``, by autograd through the components (the parts, their
    checks and schedules: :mod:`~spml_mm.models.losses.components`).

    Components (names and arguments):

    - ``k``: ``logistic(w, b)``, ``constant(value)``, ``threshold(tau)``.
    - ``v``: ``gaussian(mu, sigma)``, ``constant(weight)``,
      ``threshold(tau, below=1, above=0)``.
    - ``l1``, ``l2``, ``l3``: ``log`` (-log p), ``log_neg`` (-log(1-p)),
      ``gce(q)`` ((1-p^q)/q), ``gce_neg(q)`` ((1-(1-p)^q)/q),
      ``neg_entropy`` (p log p + (1-p) log(1-p)), ``hill(lam=1.5)``,
      ``focal_margin(margin=1, gamma=2)``.

    Args:
        preset (str): Table-1 column to start from: ``'an'``, ``'en'``,
            ``'em'``, ``'hill'``, ``'splc'`` or ``'gr'`` (see
            :data:`PRESETS`). Defaults to ``'gr'``.
        k (dict, optional): Soft pseudo-label k(p; beta), replacing the
            preset's. Defaults to None (the preset's).
        v (dict, optional): Weight v(p; alpha) of unobserved entries.
            Defaults to None (the preset's).
        l1 (dict, optional): Loss L1 of the observed positive. Defaults to
            None (the preset's).
        l2 (dict, optional): Loss L2 of an unobserved entry taken as
            positive. Defaults to None (the preset's, which may be no term).
        l3 (dict, optional): Loss L3 of an unobserved entry taken as
            negative. Defaults to None (the preset's, which may be no term).
        trainable_k (bool): Learn k's arguments per class by gradient descent
            instead of scheduling them (the paper's Table 3, last row; only
            for ``logistic``): ``w`` and ``b`` become (C,) parameters
            initialised at their start values and trained by the runner's
            optimizer (give them their own rate with
            ``paramwise_cfg.custom_keys={'loss_module': ...}``). Defaults to
            False.
        num_classes (int, optional): Number of classes C; required with
            ``trainable_k``. Defaults to None.

    Example:
        >>> # Hill loss as a framework instance, with Hill's lambda changed
        >>> loss = dict(type='UnifiedSPMLLoss', preset='hill',
        ...             l3=dict(type='hill', lam=2.))
        >>> head = dict(type='SPMLLinearClsHead', num_classes=20,
        ...             in_channels=2048, loss=loss)
        >>> custom_hooks = [dict(type='SPMLEpochHook')]  # for schedules
    """

    def __init__(self,
                 preset: str = 'gr',
                 k: Optional[dict] = None,
                 v: Optional[dict] = None,
                 l1: Optional[dict] = None,
                 l2: Optional[dict] = None,
                 l3: Optional[dict] = None,
                 trainable_k: bool = False,
                 num_classes: Optional[int] = None):
        if preset not in PRESETS:
            raise ValueError(
                f'preset must be one of {sorted(PRESETS)}, got {preset!r}')
        parts = copy.deepcopy(PRESETS[preset])
        for name, cfg in dict(k=k, v=v, l1=l1, l2=l2, l3=l3).items():
            if cfg is not None:
                parts[name] = cfg
        super().__init__(parts, trainable_k, num_classes)
        # GR's components (any arguments) run fused, as gr_value_and_grad
        funcs = {name: term and term.func for name, term in self.terms.items()}
        self._gr_q = None
        if (not trainable_k and self.k_func is k_logistic
                and self.v_func is v_gaussian
                and funcs['l1'] in (log_loss, gce_loss)
                and funcs['l2'] is gce_loss and funcs['l3'] is gce_neg_loss):
            self._gr_q = tuple(
                self.terms[name].keywords.get('q')
                for name in ('l1', 'l2', 'l3'))

    def spml_loss(self, z: torch.Tensor, s: torch.Tensor,
                  n: Optional[torch.Tensor]) -> torch.Tensor:
        if self._gr_q is None:
            return super().spml_loss(z, s, n)
        self.warn_without_schedule()
        return gr_loss(z, s, self._k_now['w'], self._k_now['b'],
                       self._v_now['mu'], self._v_now['sigma'],
                       *self._gr_q, n)
