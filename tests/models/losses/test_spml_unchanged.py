"""The losses' values and gradients do not move: pinned numbers.

Every loss op and every loss module with per-sample state or a preset runs
on one fixed float32 batch (saturated logits, a row with no observed label,
soft labels, each method's hyperparameters), once on single positives and
once with observed negatives. Its value and gradient must equal the numbers
in ``spml_unchanged.json`` within float32 rounding (rtol 1e-6), so a change
that reorders operations passes and one that changes a result fails; each
pinned number is also checked against the method's formula
(``reference.py``) within float32 precision, so the pins are the formulas'
values and not just the code's.

The numbers were written by this module's ``__main__`` from the code of
commit b6342ba, whose single-positive values equalled to the bit those of
the code before partial labels; rewrite them only for an intended change of
values: ``PYTHONPATH=. python -m tests.models.losses.test_spml_unchanged``.
"""
import json
import math
import os.path as osp
import re

import pytest
import torch

from spml_mm.models.label_states import PSEUDO_POSITIVE
from spml_mm.models.losses import (LLLoss, OPMLLoss, UnifiedSPMLLoss,
                                   an_loss, em_loss, epr_loss, gr_loss,
                                   large_loss_selection, lasd_loss, ll_loss,
                                   partial_bce_loss, role_loss)
from tests.models.losses import reference

PINS = osp.join(osp.dirname(osp.abspath(__file__)), 'spml_unchanged.json')
B, C = 5, 6


def seeded(seed, scale=1.):
    return torch.randn(B, C, generator=torch.Generator().manual_seed(seed)) \
        * scale


def pinned_batch():
    """Float32 logits (5, 6) and labels in {1, 0, -1}: rows 0-3 observe one
    positive, rows 0, 2 and 3 also negatives, row 4 nothing; row 0 is
    saturated (its positive and one negative wrong, one negative right,
    unobserved entries at +-100), row 1's positive is at -100, row 2's
    positive and one negative at +100."""
    z = seeded(0, 3.)
    z[0] = torch.tensor([100., -100., 100., -100., 100., -100.])
    z[1, 3] = -100.
    z[2, [0, 5]] = 100.
    s = torch.zeros(B, C)
    s[[0, 1, 2, 3], [1, 3, 0, 2]] = 1
    s[[0, 0, 2, 3], [2, 3, 5, 1]] = -1
    return z, s


#: EM + APL's bank: negative pseudo-labels (also on observed entries, which
#: ignore them) with their soft targets
APL_BANK = seeded(1) > 0.3
APL_TARGET = seeded(2).abs() * 0.1
#: OPML-SP's bank (corrected positives, some on observed entries) and the
#: per-class AP (-1: not measured yet)
OPML_BANK = torch.where(seeded(3) > 0.5, PSEUDO_POSITIVE, 0).to(torch.int8)
CLASS_AP = torch.linspace(-1., 0.9, C)
#: LL-Cp's bank: corrections of earlier epochs
LL_CP_BANK = torch.where(seeded(4) > 1., PSEUDO_POSITIVE,
                         0).to(torch.int8)
#: ROLE's label estimates
ESTIMATES = seeded(5, 3.)
ESTIMATES[0, 1] = 100.
GR_W = torch.linspace(0., 10., C)


def ll_case(correct):

    def loss(z, s, n):
        selected = large_loss_selection(z, s, 7, n)
        return ll_loss(z, s, selected, correct), selected

    return loss


def ll_cp(z, s, n):
    loss = LLLoss('LL-Cp', rate=0.05)
    loss.set_epoch(1, 6)
    written = []
    out = loss(z, s, pseudo_label=LL_CP_BANK,
               write_corrections=written.append, observed_negative=n)
    return out, written[0]


def preset(name, **kwargs):

    def loss(z, s, n):
        module = UnifiedSPMLLoss(preset=name, **kwargs)
        module.set_epoch(2, 6)
        return module(z, s, observed_negative=n)

    return loss


#: name -> loss(z, 0/1 positives, observed-negative mask or None), maybe
#: with a mask it chose
CASES = {
    'AN': lambda z, s, n: an_loss(z, s, 0., 1., n),
    'AN-LS': lambda z, s, n: an_loss(z, s, 0.1, 1., n),
    'WAN': lambda z, s, n: an_loss(z, s, 0., 0.2, n),
    'EM': lambda z, s, n: em_loss(z, s, 0.2, 0.02, None, None, n),
    'EM + APL': lambda z, s, n: em_loss(z, s, 0.1, 0.9, APL_BANK,
                                        APL_TARGET, n),
    'GR': lambda z, s, n: gr_loss(z, s, 2., -2., 0.65, 1.25, None, 0.01, 1.,
                                  n),
    'GR q1 q3, per-class w': lambda z, s, n: gr_loss(
        z, s, GR_W, -8., 0.8, 0.5, 0.01, 0.01, 1.5, n),
    'LASD': lambda z, s, n: lasd_loss(z, s, 0.1, 0.0564, 0.9, 0., 4., n),
    'LASD gammas': lambda z, s, n: lasd_loss(z, s, 0.03, 0.02, 0.5, 1., 2.,
                                             n),
    'LL-R': ll_case(False),
    'LL-Ct': ll_case(True),
    'LL-Cp': ll_cp,
    'EPR': lambda z, s, n: epr_loss(z, s, 2.06, n),
    'ROLE': lambda z, s, n: role_loss(z, s, ESTIMATES, 2.06, n),
    'partial-BCE': lambda z, s, n: partial_bce_loss(z, s, -40 / 9, 1., n),
    'OPML': lambda z, s, n: OPMLLoss(a=0.3, b=0.6)(z, s,
                                                   observed_negative=n),
    'OPML-SP': lambda z, s, n: OPMLLoss(
        a=0.3, b=0.6, rank_weight=0.05, soft_labels=True, gamma=2.)(
            z, s, pseudo_label=OPML_BANK, class_ap=CLASS_AP,
            observed_negative=n),
    **{f'preset {name}': preset(name)
       for name in ('an', 'en', 'em', 'hill', 'splc', 'gr')},
    'preset gr, trainable k': preset('gr', trainable_k=True, num_classes=C),
}
VARIANTS = ('single positive', 'partial')


def run(name, variant):
    """The case's value, gradient and chosen mask (or None)."""
    z, s = pinned_batch()
    n = s < 0 if variant == 'partial' else None
    leaf = z.requires_grad_()
    out = CASES[name](leaf, s.clamp(min=0), n)
    value, mask = out if isinstance(out, tuple) else (out, None)
    value.backward()
    return value.detach(), leaf.grad, mask


def load_pins():
    with open(PINS) as f:
        return json.load(f)


def test_every_case_is_pinned():
    assert sorted(load_pins()) == sorted(CASES)


@pytest.mark.parametrize('variant', VARIANTS)
@pytest.mark.parametrize('name', CASES)
def test_values_and_gradients_are_pinned(name, variant):
    pin = load_pins()[name][variant]
    value, grad, mask = run(name, variant)
    assert value.dtype == grad.dtype == torch.float32
    torch.testing.assert_close(value, torch.tensor(pin['value']), rtol=1e-6,
                               atol=1e-7)
    torch.testing.assert_close(grad, torch.tensor(pin['grad']), rtol=1e-6,
                               atol=1e-9)
    if mask is not None:
        assert mask.int().tolist() == pin['mask']


def formula(name, z, s):
    """The case's loss from reference.py: float64 logits ``z`` and labels
    ``s`` in {1, 0, -1}."""
    if name == 'LL-Cp':
        # the bank's corrections are positives on unobserved entries; k =
        # ceil(B C delta) of the rest are corrected in this batch
        s = torch.where((LL_CP_BANK == PSEUDO_POSITIVE) & (s == 0), 1., s)
        selected = reference.large_losses(z, s, math.ceil(B * C * 0.05))
        return reference.ll(z, s, selected, True), selected
    if name in ('LL-R', 'LL-Ct'):
        selected = reference.large_losses(z, s, 7)
        return reference.ll(z, s, selected, name == 'LL-Ct'), selected
    if name.startswith('OPML'):
        # soft labels p AP^gamma from float32 p, as the code holds them (a
        # soft label at z = -100 meets e^100)
        p = torch.sigmoid(z.detach().float()).double()
        if name == 'OPML':
            y = reference.opml_labels(p, s, torch.zeros_like(s).bool())
            return reference.opml(z, y, 3 / 7, 1.5), None
        y = reference.opml_labels(p, s, OPML_BANK == PSEUDO_POSITIVE,
                                  CLASS_AP.double(), 2.)
        return reference.opml(z, y, 3 / 7, 1.5, 0.05, 0.01), None
    # the presets at epoch 3 of 6: GR's w = 2 * 2/6, mu and sigma at 3/6
    value = {
        'AN': lambda: reference.an(z, s),
        'AN-LS': lambda: reference.an(z, s, 0.1),
        'WAN': lambda: reference.an(z, s, 0., 0.2),
        'EM': lambda: reference.em(z, s, 0.2),
        'EM + APL': lambda: reference.em(z, s, 0.1, 0.9, APL_BANK,
                                        APL_TARGET.double()),
        'GR': lambda: reference.gr(z, s, 2., -2., 0.65, 1.25),
        'GR q1 q3, per-class w': lambda: reference.gr(
            z, s, GR_W.double(), -8., 0.8, 0.5, 0.01, 0.01, 1.5),
        'LASD': lambda: reference.lasd(z, s, 0.1, 0.0564, 0.9),
        'LASD gammas': lambda: reference.lasd(z, s, 0.03, 0.02, 0.5, 1., 2.),
        'EPR': lambda: reference.epr(z, s, 2.06),
        'ROLE': lambda: reference.role(z, s, ESTIMATES.double(), 2.06),
        'partial-BCE': lambda: reference.partial_bce(z, s, -40 / 9, 1.),
        'preset an': lambda: reference.an(z, s),
        'preset en': lambda: reference.en(z, s),
        'preset em': lambda: reference.em(z, s, 0.1),
        'preset hill': lambda: reference.hill(z, s),
        'preset splc': lambda: reference.splc(z, s),
        'preset gr': lambda: reference.gr(z, s, 2 / 3, -2., 0.65, 1.25),
        'preset gr, trainable k': lambda: reference.gr(
            z, s, 0., -2., 0.65, 1.25),
    }[name]()
    return value, None


@pytest.mark.parametrize('variant', VARIANTS)
@pytest.mark.parametrize('name', CASES)
def test_pins_are_the_formulas_values(name, variant):
    pin = load_pins()[name][variant]
    z, s = pinned_batch()
    if variant == 'single positive':
        s = s.clamp(min=0)
    z = z.double().requires_grad_()
    value, mask = formula(name, z, s.double())
    grad, = torch.autograd.grad(value, z)
    assert pin['value'] == pytest.approx(float(value.detach()), rel=1e-5,
                                         abs=1e-7)
    torch.testing.assert_close(torch.tensor(pin['grad'], dtype=torch.float64),
                               grad, rtol=1e-4, atol=1e-7)
    if mask is not None:
        assert mask.int().tolist() == pin['mask']


def write_pins():
    """Pin the current code's numbers (9 significant digits: exact for
    float32)."""

    def number(x):
        return float(f'{x:.9g}')

    pins = {}
    for name in CASES:
        pins[name] = {}
        for variant in VARIANTS:
            value, grad, mask = run(name, variant)
            pin = dict(value=number(value.item()),
                       grad=[[number(x) for x in row]
                             for row in grad.tolist()])
            if mask is not None:
                pin['mask'] = mask.int().tolist()
            pins[name][variant] = pin
    text = json.dumps(pins, indent=1)
    # one line per row of numbers
    text = re.sub(r'\[\s+([^][]*?)\s+\]',
                  lambda m: '[' + ' '.join(m.group(1).split()) + ']', text)
    with open(PINS, 'w') as f:
        f.write(text + '\n')


if __name__ == '__main__':
    write_pins()
