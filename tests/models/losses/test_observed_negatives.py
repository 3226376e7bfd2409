"""The losses' modules on partial labels: s in {+1, 0, -1}, -1 an observed
negative.

The head passes a loss the 0/1 positives and the mask n of the observed
negatives (:func:`split`); test_value_and_grad.py checks every loss's
value and gradient on such labels against its formula. The modules with
per-sample state must keep an observed negative a known negative whatever
their bank holds.
"""
import pytest
import torch

from spml_mm.models.label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE
from spml_mm.models.losses import (EMLoss, LLLoss, OPMLLoss, PartialBCELoss,
                                   UnifiedSPMLLoss, large_loss_selection,
                                   ll_loss)
from tests.models.losses import reference
from tests.models.losses.test_value_and_grad import labelled_batch


def split(s):
    """What the head passes for s in {+1, 0, -1}: the 0/1 observed
    positives and the boolean mask of the observed negatives."""
    return s.clamp(min=0), s < 0


def partial_batch():
    """Float32 logits (8, 6) and partial labels (labelled_batch)."""
    z, s = labelled_batch(partial=True, saturated=False)
    return z.float(), s.float()


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
    z, s = partial_batch()
    positives, negatives = split(s)
    for preset in ('hill', 'en', 'splc'):
        loss = UnifiedSPMLLoss(preset=preset)
        expected = getattr(reference, preset)(z.double(), s.double())
        out = loss(z, positives, observed_negative=negatives)
        torch.testing.assert_close(out.double(), expected, rtol=1e-5,
                                   atol=1e-7)
        assert loss(z, positives) != out


def test_em_bank_never_overrides_an_observed_negative():
    z, s = partial_batch()
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
    z, s = partial_batch()
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
    z, s = partial_batch()
    loss = OPMLLoss(soft_labels=True, gamma=1.)
    bank = torch.full(s.shape, PSEUDO_POSITIVE, dtype=torch.int8)
    bank[s == 0] = 0
    class_ap = torch.full((6, ), 0.8)
    positives, negatives = split(s)
    out = loss(z, positives, pseudo_label=bank, class_ap=class_ap,
               observed_negative=negatives)
    z = z.double()
    label = reference.opml_labels(torch.sigmoid(z), s.double(),
                                  bank == PSEUDO_POSITIVE, class_ap.double())
    torch.testing.assert_close(out.double(), reference.opml(z, label, 1., 1.),
                               rtol=1e-5, atol=1e-7)


def test_partial_bce_normalisation():
    """g(1) = 1: with every label known it is the mean BCE; the paper's
    default gives g(0.1) = 5."""
    z, _ = partial_batch()
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
