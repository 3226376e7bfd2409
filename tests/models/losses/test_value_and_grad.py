"""Every loss's analytic gradient against autograd of its formula.

Each ``<method>_value_and_grad`` is evaluated in float64 and compared with
the method's reference (``reference.py``, written from the method pages, docs/methods/):
the value within 1e-9, the gradient with autograd of the reference. The
labels are single positives and partial labels (observed negatives, passed
as the head passes them: the 0/1 positives and the mask ``n``); the logits
include |z| = 100 on every kind of label and a row with no observed label.
The float32 loss op (the one the modules call) must give the same value
within 1e-6 and back-propagate the same gradient.
"""
import math

import numpy as np
import pytest
import torch

from spml_mm.models.losses import (an_loss, em_loss, epr_loss, gr_loss,
                                   high_rank_penalty, lasd_loss, ll_loss,
                                   opml_loss, partial_bce_loss, role_loss,
                                   view_consistency)
from spml_mm.models.losses.an_loss import an_value_and_grad
from spml_mm.models.losses.consistency import consistency_value_and_grad
from spml_mm.models.losses.em_loss import em_value_and_grad
from spml_mm.models.losses.epr_loss import epr_value_and_grad
from spml_mm.models.losses.gr import gr_value_and_grad
from spml_mm.models.losses.large_loss import ll_value_and_grad
from spml_mm.models.losses.lasd_loss import lasd_value_and_grad
from spml_mm.models.losses.opml_loss import (high_rank_value_and_grad,
                                             opml_value_and_grad)
from spml_mm.models.losses.partial_bce_loss import partial_bce_value_and_grad
from spml_mm.models.losses.role_loss import role_value_and_grad
from tests.models.losses import reference


def labelled_batch(partial, saturated, seed=0):
    """Logits (8, 6) and labels: rows 0-5 observe one positive and (partial)
    two negatives, row 6 a positive only, row 7 nothing. Saturated: row 0
    confident and right on its observed labels, row 1 confident and wrong,
    and (single positive) the same on the unobserved entries there."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(8, 6, generator=g, dtype=torch.float64) * 3
    s = torch.zeros(8, 6, dtype=torch.float64)
    for i in range(7):
        order = torch.randperm(6, generator=g)
        s[i, order[0]] = 1
        if i < 6:
            s[i, order[1:3]] = -1
    if saturated:
        z[0] = torch.where(s[0] != 0, 100. * s[0], z[0])
        z[1] = torch.where(s[1] != 0, -100. * s[1], z[1])
    return z, s if partial else s.clamp(min=0)


def seeded(shape, seed, dtype=torch.float64):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed),
                      dtype=dtype)


#: name -> (value_and_grad, float32 op, reference, hyperparameters(z, s))
CASES = {
    'AN': (an_value_and_grad, an_loss, reference.an, lambda z, s: (0., 1.)),
    'AN-LS': (an_value_and_grad, an_loss, reference.an,
              lambda z, s: (0.1, 1.)),
    'WAN': (an_value_and_grad, an_loss, reference.an,
            lambda z, s: (0., 0.25)),
    'EM': (em_value_and_grad, em_loss, reference.em,
           lambda z, s: (0.2, 0.02, torch.zeros_like(s, dtype=torch.bool),
                         torch.zeros_like(s))),
    # the bank marks observed entries too: they must ignore it
    'EM + APL': (em_value_and_grad, em_loss, reference.em,
                 lambda z, s: (0.1, 0.9, seeded(s.shape, 1) < 0.5,
                               seeded(s.shape, 2) * 0.2)),
    'GR': (gr_value_and_grad, gr_loss, reference.gr,
           lambda z, s: (2., -2., 0.6, 1.2, None, 0.01, 1.)),
    'GR q1, per-class beta': (
        gr_value_and_grad, gr_loss, reference.gr,
        lambda z, s: (torch.linspace(0., 10., 6, dtype=s.dtype), -8., 0.8,
                      0.5, 0.01, 0.01, 1.5)),
    'LASD': (lasd_value_and_grad, lasd_loss, reference.lasd,
             lambda z, s: (0.1, 0.0564, 0.9, 0., 4.)),
    # tau 0.05: most unobserved labels pseudo positives, observed
    # negatives never
    'LASD low tau, gammas': (lasd_value_and_grad, lasd_loss, reference.lasd,
                             lambda z, s: (0.03, 0.02, 0.05, 1., 2.)),
    'LL-R': (ll_value_and_grad, ll_loss, reference.ll,
             lambda z, s: (reference.large_losses(z, s, 9), False)),
    'LL-Ct': (ll_value_and_grad, ll_loss, reference.ll,
              lambda z, s: (reference.large_losses(z, s, 9), True)),
    'EPR': (epr_value_and_grad, epr_loss, reference.epr,
            lambda z, s: (2.06, )),
    'ROLE': (role_value_and_grad, role_loss, reference.role,
             lambda z, s: ((seeded(s.shape, 4) - 0.5) * 12, 2.06)),
    'partial-BCE': (partial_bce_value_and_grad, partial_bce_loss,
                    reference.partial_bce, lambda z, s: (-40 / 9, 1.)),
    'partial-BCE gamma 2': (partial_bce_value_and_grad, partial_bce_loss,
                            reference.partial_bce, lambda z, s: (0.5, 2.)),
    'OPML': (opml_value_and_grad, opml_loss, reference.opml,
             lambda z, s: (1., 1., 0., 0.01)),
    'OPML-SP soft labels + high rank': (
        opml_value_and_grad, opml_loss, reference.opml,
        lambda z, s: (0.6, 2.3, 0.01, 0.01)),
}


def opml_y(name, z, s):
    """OPML's labels; OPML-SP's soft labels from float32 p, so that the
    float32 run holds the same ones (a soft label meets e^100)."""
    ap = torch.linspace(0.2, 0.9, z.size(1), dtype=torch.float64)
    p = torch.sigmoid(z.detach().float()).double()
    return reference.opml_labels(p, s, torch.zeros_like(s, dtype=torch.bool),
                                 ap if name.startswith('OPML-SP') else None)


def call(name, function, z, s, hyper):
    """``function`` given what the head passes: the 0/1 positives and, with
    observed negatives, their mask ``n`` (LL's loss takes none: its
    selection skips them); OPML the labels y."""
    if name.startswith('OPML'):
        return function(z, opml_y(name, z, s).to(z.dtype), *hyper)
    positives, negatives = s.clamp(min=0), s < 0
    if name.startswith('LL') or not negatives.any():
        return function(z, positives, *hyper)
    return function(z, positives, *hyper, n=negatives)


@pytest.mark.parametrize('saturated', [False, True],
                         ids=['moderate', 'saturated'])
@pytest.mark.parametrize('partial', [False, True],
                         ids=['single-positive', 'partial'])
@pytest.mark.parametrize('name', CASES)
def test_gradient_is_autograd_of_the_formula(name, partial, saturated):
    value_and_grad, loss, formula, args = CASES[name]
    z, s = labelled_batch(partial, saturated)
    hyper = args(z, s)
    value, grad = call(name, value_and_grad, z, s, hyper)

    z_ref = z.clone().requires_grad_()
    y = opml_y(name, z, s) if name.startswith('OPML') else s
    expected = formula(z_ref, y, *hyper)
    expected_grad, = torch.autograd.grad(expected, z_ref)
    torch.testing.assert_close(value, expected, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(grad, expected_grad, rtol=1e-7, atol=1e-9)

    # the float32 op: same value within 1e-6, same gradient backwards
    z32 = z.float().requires_grad_()
    out = call(name, loss, z32, s.float(), [
        h.float() if torch.is_tensor(h) and h.is_floating_point() else h
        for h in hyper
    ])
    assert out.dtype == torch.float32
    assert float(out.detach()) == pytest.approx(float(value), rel=1e-6,
                                               abs=1e-6)
    (3 * out).backward()
    torch.testing.assert_close(z32.grad.double(), 3 * grad, rtol=1e-4,
                               atol=1e-7)


def test_observed_negatives_change_the_losses():
    """Each loss treats -1 as neither a positive nor an unobserved label:
    the value differs from both readings (plain AN and LL excepted, for
    which an unobserved label is already a negative of weight 1)."""
    z, s = labelled_batch(partial=True, saturated=False)
    for name, (value_and_grad, _, _, args) in CASES.items():
        hyper = args(z, s)
        value = call(name, value_and_grad, z, s, hyper)[0]
        if name not in ('AN', 'AN-LS', 'LL-R', 'LL-Ct', 'OPML'):
            assert value != call(name, value_and_grad, z, s.clamp(min=0),
                                 hyper)[0], name
        assert value != call(name, value_and_grad, z, s.abs(), hyper)[0], name


def test_high_rank_term_against_svd_for_both_shapes():
    """-sum log(sigma^2 + delta) from a Cholesky factor of the smaller Gram
    matrix, for tall, wide and rank-deficient F, against NumPy's SVD; from
    128 rows (or columns) the Gram matrix is built from blocks."""
    g = torch.Generator().manual_seed(3)
    row = torch.rand(1, 7, generator=g, dtype=torch.float64)
    patterns = torch.rand(4, 150, generator=g, dtype=torch.float64)
    for probs in (torch.rand(9, 4, generator=g, dtype=torch.float64),
                  torch.rand(3, 8, generator=g, dtype=torch.float64),
                  row.repeat(5, 1),
                  torch.rand(131, 150, generator=g, dtype=torch.float64),
                  torch.rand(300, 129, generator=g, dtype=torch.float64),
                  patterns[torch.randint(4, (140, ), generator=g)]):
        u, sv, vt = np.linalg.svd(probs.numpy(), full_matrices=False)
        value, grad = high_rank_value_and_grad(probs, 0.05)
        assert float(value) == pytest.approx(-np.log(sv**2 + 0.05).sum(),
                                             rel=1e-6)
        expected = -2 * (u * (sv / (sv**2 + 0.05))) @ vt
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5,
                                   atol=1e-6)
        f = probs.float().requires_grad_()
        high_rank_penalty(f, 0.05).backward()
        np.testing.assert_allclose(f.grad.numpy(), expected, rtol=1e-4,
                                   atol=1e-5)


def test_autocast_keeps_float32_and_returns_the_input_dtype():
    z, s = labelled_batch(False, True)
    z16 = z.to(torch.bfloat16).requires_grad_()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = opml_loss(z16, s.float(), 1., 1., 0.01, 0.01)
    assert out.dtype == torch.float32 and math.isfinite(float(out.detach()))
    out.backward()
    assert z16.grad.dtype == torch.bfloat16
    assert torch.isfinite(z16.grad.float()).all()


def test_consistency_gradient_is_autograd_of_the_formula():
    g = torch.Generator().manual_seed(5)
    views = torch.randn(3, 4, 6, generator=g, dtype=torch.float64) * 3
    views[0, 0] = 100.
    value, grad = consistency_value_and_grad(views)
    ref = views.clone().requires_grad_()
    expected = reference.consistency(ref)
    expected_grad, = torch.autograd.grad(expected, ref)
    torch.testing.assert_close(value, expected)
    torch.testing.assert_close(grad, expected_grad)
    z32 = views.float().requires_grad_()
    out = view_consistency(z32)
    assert float(out.detach()) == pytest.approx(float(value), rel=1e-6,
                                               abs=1e-6)
    out.backward()
    torch.testing.assert_close(z32.grad.double(), grad, rtol=1e-4,
                               atol=1e-7)
