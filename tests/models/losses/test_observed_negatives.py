"""The losses on partial labels: s in {+1, 0, -1}, -1 an observed negative.

The head passes a loss the 0/1 positives and the mask n of the observed
negatives (:func:`split`). Each ``<method>_value_and_grad`` is evaluated in
float64 on targets with observed negatives and compared with a reference
written literally from docs/methods.md ("Partial labels": what each loss
does with an observed negative), its gradient with autograd of that reference; the float32 op
must give the same value and back-propagate the same gradient. The modules
with per-sample state must keep an observed negative a known negative
whatever their bank holds.
"""
import pytest
import torch

from spml_mm.models.label_banks.label_bank import (PSEUDO_NEGATIVE,
                                                  PSEUDO_POSITIVE)
from spml_mm.models.losses import (EMLoss, LLLoss, OPMLLoss, PartialBCELoss,
                                   UnifiedSPMLLoss, an_loss, em_loss,
                                   epr_loss, gr_loss, lasd_loss, ll_loss,
                                   large_loss_selection, partial_bce_loss,
                                   role_loss)
from spml_mm.models.losses.an_loss import an_value_and_grad
from spml_mm.models.losses.em_loss import em_value_and_grad
from spml_mm.models.losses.epr_loss import epr_value_and_grad
from spml_mm.models.losses.gr import gr_value_and_grad
from spml_mm.models.losses.large_loss import ll_value_and_grad
from spml_mm.models.losses.lasd_loss import lasd_value_and_grad
from spml_mm.models.losses.opml_loss import opml_loss
from spml_mm.models.losses.partial_bce_loss import partial_bce_value_and_grad
from spml_mm.models.losses.role_loss import role_value_and_grad

log = torch.log


def split(s):
    """What the head passes for s in {+1, 0, -1}: the 0/1 observed
    positives and the boolean mask of the observed negatives."""
    return s.clamp(min=0), s < 0


def with_negatives(value_and_grad, z, s, *hyper):
    """``value_and_grad`` on the head's split of s (LL's loss takes only
    the positives: its selection skips the negatives)."""
    positives, negatives = split(s)
    if value_and_grad in (ll_value_and_grad, ll_loss):
        return value_and_grad(z, positives, *hyper)
    return value_and_grad(z, positives, *hyper, n=negatives)


def partial_batch(saturated, seed=0):
    """Logits (8, 6) and partial labels: rows 0-5 observe one positive and
    two negatives, row 6 a positive only, row 7 nothing."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(8, 6, generator=g, dtype=torch.float64) * 3
    s = torch.zeros(8, 6, dtype=torch.float64)
    for i in range(7):
        order = torch.randperm(6, generator=g)
        s[i, order[0]] = 1
        if i < 6:
            s[i, order[1:3]] = -1
    if saturated:
        # confident and wrong, confident and right, on every kind of label
        z[0] = torch.where(s[0] != 0, 100. * s[0], z[0])
        z[1] = torch.where(s[1] != 0, -100. * s[1], z[1])
    return z, s


def ref_an(z, s, eps, lam):
    p, t = torch.sigmoid(z), (s > 0).double() * (1 - 2 * eps) + eps
    bce = -(t * log(p) + (1 - t) * log(1 - p))
    return (torch.where(s != 0, 1., lam) * bce).mean()


def ref_em(z, s, alpha, beta, pseudo, t):
    p = torch.sigmoid(z)
    entropy = -(p * log(p) + (1 - p) * log(1 - p))
    bce = -(t * log(p) + (1 - t) * log(1 - p))
    loss = torch.where(pseudo & (s == 0), beta * bce, -alpha * entropy)
    return torch.where(s > 0, -log(p),
                       torch.where(s < 0, -log(1 - p), loss)).mean()


def ref_gr(z, s, w, b, mu, sigma, q1, q2, q3):
    p = torch.sigmoid(z)
    k, v = torch.sigmoid(w * p.detach() + b), torch.exp(
        -(p.detach() - mu)**2 / (2 * sigma**2))
    l1 = (lambda x: -log(x)) if q1 is None else (
        lambda x: (1 - x**q1) / q1)
    l2, l3 = (1 - p**q2) / q2, (1 - (1 - p)**q3) / q3
    return torch.where(s > 0, l1(p),
                       torch.where(s < 0, l1(1 - p),
                                   v * (k * l2 + (1 - k) * l3))).mean()


def ref_lasd(z, s, lam_pos, lam_neg, tau, g_pos, g_neg):
    p = torch.sigmoid(z)
    lp, ln = -(1 - p)**g_pos * log(p), -p**g_neg * log(1 - p)
    unobserved = (s == 0).double()
    pseudo = (p.detach() > tau).double() * unobserved
    loss = ((s > 0).double() * lp + (s < 0).double() * ln +
            lam_pos * pseudo * lp + lam_neg * (unobserved - pseudo) * ln)
    return loss.sum(1).mean()


def ref_ll(z, s, selected, correct):
    p = torch.sigmoid(z)
    positive = (s > 0) | (selected & correct)
    loss = torch.where(positive, -log(p), -log(1 - p))
    return torch.where(selected & ~torch.tensor(correct), 0., loss).mean()


def ref_epr(z, s, k):
    p = torch.sigmoid(z)
    observed = torch.where(s > 0, -log(p),
                           torch.where(s < 0, -log(1 - p), 0.))
    return observed.mean() + (p.sum(1).mean() - k)**2 / z.size(1)**2


def ref_role(z, s, u, k):
    p, q = torch.sigmoid(z), torch.sigmoid(u)

    def bce(x, t):
        return -(t * log(x) + (1 - t) * log(1 - x))

    observed = torch.where(s > 0, -log(p) - log(q),
                           torch.where(s < 0, -log(1 - p) - log(1 - q), 0.))
    cross = bce(p, q.detach()) + bce(q, p.detach())
    reg = ((p.sum(1).mean() - k)**2 + (q.sum(1).mean() - k)**2) / z.size(1)**2
    return 0.5 * (observed + cross).mean() + 0.5 * reg


def ref_partial_bce(z, s, alpha, gamma):
    p = torch.sigmoid(z)
    known = (s != 0).double()
    bce = -((s > 0).double() * log(p) + (s < 0).double() * log(1 - p))
    p_y = known.mean(1)
    g = alpha * p_y**gamma + 1 - alpha
    return (g / z.size(1) * (known * bce).sum(1)).mean()


def pseudo_everywhere(s):
    """A bank marking every entry, observed ones included."""
    return torch.ones_like(s, dtype=torch.bool)


CASES = {
    'AN': (an_value_and_grad, an_loss, ref_an, lambda s: (0., 1.)),
    'AN-LS': (an_value_and_grad, an_loss, ref_an, lambda s: (0.1, 1.)),
    'WAN': (an_value_and_grad, an_loss, ref_an, lambda s: (0., 0.2)),
    'EM': (em_value_and_grad, em_loss, ref_em,
           lambda s: (0.2, 0.02, torch.zeros_like(s, dtype=torch.bool),
                      torch.zeros_like(s))),
    'EM + APL on every entry': (
        em_value_and_grad, em_loss, ref_em,
        lambda s: (0.1, 0.9, pseudo_everywhere(s), torch.full_like(s, 0.03))),
    'GR': (gr_value_and_grad, gr_loss, ref_gr,
           lambda s: (2., -2., 0.6, 1.2, None, 0.01, 1.)),
    'GR q1, per-class beta': (
        gr_value_and_grad, gr_loss, ref_gr,
        lambda s: (torch.linspace(0., 10., 6, dtype=s.dtype), -8., 0.8, 0.5,
                   0.01, 0.01, 1.5)),
    'LASD': (lasd_value_and_grad, lasd_loss, ref_lasd,
             lambda s: (0.1, 0.0564, 0.9, 0., 4.)),
    # tau 0: every unobserved label a pseudo positive, no observed negative
    'LASD tau 0, gamma_pos': (lasd_value_and_grad, lasd_loss, ref_lasd,
                              lambda s: (0.03, 0.02, 0., 1., 2.)),
    'LL-R': (ll_value_and_grad, ll_loss, ref_ll,
             lambda s: (large_loss_selection(
                 torch.arange(s.numel(), dtype=s.dtype).view(s.shape),
                 s.clamp(min=0), 9, s < 0), False)),
    'LL-Ct': (ll_value_and_grad, ll_loss, ref_ll,
              lambda s: (large_loss_selection(
                  -torch.arange(s.numel(), dtype=s.dtype).view(s.shape),
                  s.clamp(min=0), 9, s < 0), True)),
    'EPR': (epr_value_and_grad, epr_loss, ref_epr, lambda s: (2.06, )),
    'ROLE': (role_value_and_grad, role_loss, ref_role,
             lambda s: (torch.randn(s.shape, dtype=s.dtype,
                                    generator=torch.Generator().manual_seed(
                                        4)) * 3, 2.06)),
    'partial-BCE': (partial_bce_value_and_grad, partial_bce_loss,
                    ref_partial_bce, lambda s: (-40 / 9, 1.)),
    'partial-BCE gamma 2': (partial_bce_value_and_grad, partial_bce_loss,
                            ref_partial_bce, lambda s: (0.5, 2.)),
}


@pytest.mark.parametrize('saturated', [False, True])
@pytest.mark.parametrize('name', CASES)
def test_gradient_is_autograd_of_the_formula(name, saturated):
    value_and_grad, loss, reference, args = CASES[name]
    z, s = partial_batch(saturated)
    assert (s < 0).any()
    hyper = args(s)
    value, grad = with_negatives(value_and_grad, z, s, *hyper)

    z_ref = z.clone().requires_grad_()
    expected = reference(z_ref, s, *hyper)
    expected_grad, = torch.autograd.grad(expected, z_ref)
    assert torch.isfinite(value) and torch.isfinite(grad).all()
    if not (torch.isfinite(expected) and torch.isfinite(expected_grad).all()):
        # log(1 - p) of p = 1.0 in float64: only the stable form is finite
        assert saturated
    else:
        torch.testing.assert_close(value, expected, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(grad, expected_grad, rtol=1e-7,
                                   atol=1e-9)

    # the float32 op: same value within 1e-6, same gradient backwards
    z32 = z.float().requires_grad_()
    out = with_negatives(loss, z32, s.float(), *[
        h.float() if torch.is_tensor(h) and h.is_floating_point() else h
        for h in hyper
    ])
    assert out.dtype == torch.float32
    assert float(out) == pytest.approx(float(value), rel=1e-6, abs=1e-6)
    (3 * out).backward()
    torch.testing.assert_close(z32.grad.double(), 3 * grad, rtol=1e-4,
                               atol=1e-7)


def test_observed_negatives_change_the_losses():
    """Each loss treats -1 as neither a positive nor an unobserved label:
    the value differs from both readings (plain AN excepted, for which an
    unobserved label is already a negative of weight 1)."""
    z, s = partial_batch(False)
    as_unobserved, as_positive = s.clamp(min=0), s.abs()
    for name, (value_and_grad, _, _, args) in CASES.items():
        hyper = args(s)
        value = with_negatives(value_and_grad, z, s, *hyper)[0]
        if name not in ('AN', 'AN-LS', 'LL-R', 'LL-Ct'):
            assert value != value_and_grad(z, as_unobserved, *hyper)[0], name
        assert value != value_and_grad(z, as_positive, *hyper)[0], name


def test_large_loss_selection_skips_observed_negatives():
    s = torch.tensor([[1., -1., 0., -1.], [0., 0., -1., 1.]])
    z = torch.tensor([[0., 9., 5., 8.], [4., 1., 7., 0.]])
    # the three largest unobserved losses, never the negatives at 9, 8, 7
    positives, negatives = split(s)
    assert large_loss_selection(z, positives, 3, negatives).tolist() == [
        [False, False, True, False], [True, True, False, False]]


def test_unified_framework_costs_l1_of_the_negated_logit():
    """The autograd presets: an observed negative costs L1(-z), e.g.
    -log(1 - p) for Hill and EN, the focal margin loss of -z for SPLC."""
    z, s = partial_batch(False)
    z, s = z.float(), s.float()
    p = torch.sigmoid(z)
    for preset in ('hill', 'en', 'splc'):
        loss = UnifiedSPMLLoss(preset=preset)
        k = loss.k_func(p, **loss._k_now)
        v = loss.v_func(p, **loss._v_now)
        l1, l2, l3 = (loss.terms[name] for name in ('l1', 'l2', 'l3'))
        unobserved = (1 - k) * l3(z)
        if l2 is not None:
            unobserved = unobserved + k * l2(z)
        entries = torch.where(s > 0, l1(z),
                              torch.where(s < 0, l1(-z), v * unobserved))
        positives, negatives = split(s)
        torch.testing.assert_close(
            loss(z, positives, observed_negative=negatives), entries.mean())
        assert loss(z, positives) != entries.mean()


def test_em_bank_never_overrides_an_observed_negative():
    z, s = partial_batch(False)
    z, s = z.float(), s.float()
    loss = EMLoss(alpha=0.1, beta=0.9)
    bank = torch.full(s.shape, PSEUDO_NEGATIVE, dtype=torch.int8)
    soft = torch.full(s.shape, 0.3)
    positives, negatives = split(s)
    with_bank = loss(z, positives, pseudo_label=bank, soft_label=soft,
                     observed_negative=negatives)
    # the bank on the unobserved entries only: the same loss
    only_unobserved = torch.where(s == 0, bank, torch.zeros_like(bank))
    assert with_bank == loss(z, positives, pseudo_label=only_unobserved,
                             soft_label=soft, observed_negative=negatives)
    assert with_bank != loss(z, s.clamp(min=0), pseudo_label=bank,
                             soft_label=soft)


def test_ll_cp_never_corrects_an_observed_negative():
    z, s = partial_batch(False)
    z, s = z.float(), s.float()
    z[s < 0] = 50.  # the largest logits of the batch
    loss = LLLoss('LL-Cp', rate=0.1)
    loss.set_epoch(1, 6)
    # a bank that (wrongly) holds corrections on observed negatives
    bank = torch.where(s < 0, PSEUDO_POSITIVE, 0).to(torch.int8)
    written = []
    positives, negatives = split(s)
    out = loss(z, positives, pseudo_label=bank,
               write_corrections=written.append, observed_negative=negatives)
    corrected, = written
    assert corrected.any() and not (corrected & (s != 0)).any()
    expected = ll_loss(z, positives, corrected, True)
    torch.testing.assert_close(out, expected)


def test_opml_keeps_observed_negatives_at_zero():
    z, s = partial_batch(False)
    z, s = z.float(), s.float()
    loss = OPMLLoss(soft_labels=True, gamma=1.)
    bank = torch.full(s.shape, PSEUDO_POSITIVE, dtype=torch.int8)
    bank[s == 0] = 0
    class_ap = torch.full((6, ), 0.8)
    positives, negatives = split(s)
    out = loss(z, positives, pseudo_label=bank, class_ap=class_ap,
               observed_negative=negatives)
    label = torch.where(s > 0, 1., torch.where(
        s < 0, 0., torch.sigmoid(z) * 0.8))
    torch.testing.assert_close(out, opml_loss(z, label, 1., 1.))


def test_partial_bce_normalisation():
    """g(1) = 1: with every label known it is the mean BCE; the paper's
    default gives g(0.1) = 5."""
    z, _ = partial_batch(False)
    z = z.float()
    full = torch.where(torch.rand(z.shape, generator=torch.Generator()
                                  .manual_seed(2)) < 0.3, 1., -1.)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(
        z, (full > 0).float())
    torch.testing.assert_close(
        PartialBCELoss()(z, *split(full)), bce)
    loss = PartialBCELoss()
    assert loss.alpha * 0.1 + 1 - loss.alpha == pytest.approx(5.)
    # one known label of ten: g(0.1) times that label's BCE, over C
    z = torch.randn(1, 10, generator=torch.Generator().manual_seed(3))
    s = torch.zeros(1, 10)
    s[0, 3] = -1
    expected = 5 * torch.nn.functional.softplus(z[0, 3]) / 10
    torch.testing.assert_close(
        loss(z, *split(s)), expected)
    for bad in (dict(gamma=0.), dict(scale_at_tenth=-1.),
                dict(scale_at_tenth=0.05)):
        with pytest.raises(ValueError):
            PartialBCELoss(**bad)
