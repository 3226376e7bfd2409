"""Every loss's analytic gradient against autograd of its direct formula.

Each ``<method>_value_and_grad`` is evaluated in float64 and compared with
a reference written literally from the method's equation (plain ``log`` of
probabilities, autograd for the gradient), on random logits that include
|z| = 100 and rows with no observed label; the float32 loss op (the one the
modules call) must give the same value within 1e-6 and back-propagate the
same gradient.
"""
import math

import numpy as np
import pytest
import torch

from spml_mm.models.losses.an_loss import an_loss, an_value_and_grad
from spml_mm.models.losses.em_loss import em_loss, em_value_and_grad
from spml_mm.models.losses.gr import gr_loss, gr_value_and_grad
from spml_mm.models.losses.lasd_loss import lasd_loss, lasd_value_and_grad
from spml_mm.models.losses.opml_loss import (high_rank_penalty,
                                             high_rank_value_and_grad,
                                             opml_loss, opml_value_and_grad)


log = torch.log


def ref_an(z, s, eps, lam):
    p, t = torch.sigmoid(z), s * (1 - 2 * eps) + eps
    bce = -(t * log(p) + (1 - t) * log(1 - p))
    return ((s + (1 - s) * lam) * bce).mean()


def ref_em(z, s, alpha, beta, neg, t):
    p = torch.sigmoid(z)
    entropy = -(p * log(p) + (1 - p) * log(1 - p))
    bce = -(t * log(p) + (1 - t) * log(1 - p))
    loss = torch.where(s > 0, -log(p), -alpha * entropy)
    return torch.where(neg & (s == 0), beta * bce, loss).mean()


def ref_gr(z, s, w, b, mu, sigma, q1, q2, q3):
    p = torch.sigmoid(z)
    k, v = torch.sigmoid(w * p.detach() + b), torch.exp(
        -(p.detach() - mu)**2 / (2 * sigma**2))
    l1 = -log(p) if q1 is None else (1 - p**q1) / q1
    l2, l3 = (1 - p**q2) / q2, (1 - (1 - p)**q3) / q3
    return (s * l1 + (1 - s) * v * (k * l2 + (1 - k) * l3)).mean()


def ref_lasd(z, s, lam_pos, lam_neg, tau, g_pos, g_neg):
    p = torch.sigmoid(z)
    lp, ln = -(1 - p)**g_pos * log(p), -p**g_neg * log(1 - p)
    pseudo = (p.detach() > tau).double()
    loss = (s * lp + lam_pos * (1 - s) * pseudo * lp +
            lam_neg * (1 - s) * (1 - pseudo) * ln)
    return loss.sum(1).mean()


def ref_opml(z, y, alpha, beta, lam, delta):
    neg = log(alpha + ((1 - y) * torch.exp(z)).sum(1))
    pos = log(beta + (y * torch.exp(-z)).sum(1))
    loss = (neg + pos).mean()
    if lam:
        sv = torch.linalg.svdvals(torch.sigmoid(z))
        loss = loss - lam * log(sv**2 + delta).sum()
    return loss


def batch(saturated, seed=0):
    """Logits (6, 5) and single-positive labels; the last row has none."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(6, 5, generator=g, dtype=torch.float64) * 3
    if saturated:
        z[0], z[1, :3] = 100., -100.
    s = torch.zeros(6, 5, dtype=torch.float64)
    s[torch.arange(5), torch.randint(5, (5, ), generator=g)] = 1
    return z, s


CASES = {
    'AN': (an_value_and_grad, an_loss, ref_an, lambda s: (0., 1.)),
    'AN-LS': (an_value_and_grad, an_loss, ref_an, lambda s: (0.1, 1.)),
    'WAN': (an_value_and_grad, an_loss, ref_an, lambda s: (0., 0.25)),
    'EM': (em_value_and_grad, em_loss, ref_em,
           lambda s: (0.2, 0.02, torch.zeros_like(s, dtype=torch.bool),
                      torch.zeros_like(s))),
    'EM + APL': (em_value_and_grad, em_loss, ref_em,
                 lambda s: (0.1, 0.9, torch.rand(s.shape, generator=torch.
                                                 Generator().manual_seed(1))
                            < 0.5, torch.full_like(s, 0.03))),
    'GR': (gr_value_and_grad, gr_loss, ref_gr,
           lambda s: (2., -2., 0.6, 1.2, None, 0.01, 1.)),
    'GR q1, per-class beta': (
        gr_value_and_grad, gr_loss, ref_gr,
        lambda s: (torch.linspace(0., 10., 5, dtype=s.dtype), -8., 0.8, 0.5,
                   0.01, 0.01, 1.5)),
    'LASD': (lasd_value_and_grad, lasd_loss, ref_lasd,
             lambda s: (0.1, 0.0564, 0.9, 0., 4.)),
    'LASD gamma_pos': (lasd_value_and_grad, lasd_loss, ref_lasd,
                       lambda s: (0.03, 0.02, 0.5, 1., 2.)),
    'OPML': (opml_value_and_grad, opml_loss, ref_opml,
             lambda s: (1., 1., 0., 0.01)),
    'OPML-SP soft labels + high rank': (
        opml_value_and_grad, opml_loss, ref_opml,
        lambda s: (0.6, 2.3, 0.01, 0.01)),
}


def labels(name, z, s):
    """Soft labels p * AP for OPML-SP; the observed matrix otherwise."""
    if name.startswith('OPML-SP'):
        ap = torch.linspace(0.2, 0.9, z.size(1))
        return torch.where(s > 0, s, torch.sigmoid(z) * ap)
    return s


@pytest.mark.parametrize('saturated', [False, True])
@pytest.mark.parametrize('name', CASES)
def test_gradient_is_autograd_of_the_formula(name, saturated):
    value_and_grad, loss, reference, args = CASES[name]
    z, s = batch(saturated)
    # labels a float32 run can hold exactly (tiny soft labels meet e^100)
    y = labels(name, z.float(), s.float()).double()
    hyper = args(s)
    value, grad = value_and_grad(z, y, *hyper)

    z_ref = z.clone().requires_grad_()
    expected = reference(z_ref, y, *hyper)
    expected_grad, = torch.autograd.grad(expected, z_ref)
    finite = torch.isfinite(expected_grad).all()
    assert torch.isfinite(grad).all()
    if saturated and not finite:
        # log(1 - p) of p = 1.0 in float64: only the stable form is finite
        assert name.startswith(('AN', 'WAN', 'EM', 'LASD', 'GR'))
    else:
        torch.testing.assert_close(value, expected, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(grad, expected_grad, rtol=1e-7,
                                   atol=1e-9)

    # the float32 op: same value within 1e-6, same gradient backwards
    z32 = z.float().requires_grad_()
    out = loss(z32, y.float(), *[
        h.float() if torch.is_tensor(h) and h.is_floating_point() else h
        for h in hyper
    ])
    assert out.dtype == torch.float32
    assert float(out) == pytest.approx(float(value), rel=1e-6, abs=1e-6)
    (3 * out).backward()
    torch.testing.assert_close(z32.grad.double(), 3 * grad, rtol=1e-4,
                               atol=1e-7)


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
    z, s = batch(True)
    z16 = z.to(torch.bfloat16).requires_grad_()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = opml_loss(z16, s.float(), 1., 1., 0.01, 0.01)
    assert out.dtype == torch.float32 and math.isfinite(float(out))
    out.backward()
    assert z16.grad.dtype == torch.bfloat16
    assert torch.isfinite(z16.grad.float()).all()


def test_consistency_gradient_is_autograd_of_the_formula():
    from spml_mm.models.losses.consistency import (consistency_value_and_grad,
                                                   view_consistency)
    g = torch.Generator().manual_seed(5)
    views = torch.randn(3, 4, 6, generator=g, dtype=torch.float64) * 3
    views[0, 0] = 100.
    value, grad = consistency_value_and_grad(views)
    ref = views.clone().requires_grad_()
    p = torch.sigmoid(ref)
    expected = sum(((p[i] - p[j])**2).sum(-1) for i in range(3)
                   for j in range(i + 1, 3)).mean()
    expected_grad, = torch.autograd.grad(expected, ref)
    torch.testing.assert_close(value, expected)
    torch.testing.assert_close(grad, expected_grad)
    z32 = views.float().requires_grad_()
    out = view_consistency(z32)
    assert float(out) == pytest.approx(float(value), rel=1e-6, abs=1e-6)
    out.backward()
    torch.testing.assert_close(z32.grad.double(), grad, rtol=1e-4,
                               atol=1e-7)
