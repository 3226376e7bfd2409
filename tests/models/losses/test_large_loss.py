import math

import pytest
import torch

from spml_mm.models.losses import LLLoss, large_loss_selection, ll_loss
from spml_mm.models.losses.large_loss import (ll_value_and_grad,
                                              num_large_losses)
from tests.models.losses import reference


def softplus(x):
    return math.log1p(math.exp(x))


# two images, three classes; unobserved logits 0, -1, 1, 3
Z = [[2., 0., -1.], [1., 3., -2.]]
S = [[1., 0., 0.], [0., 0., 1.]]


def tensors():
    return torch.tensor(Z, requires_grad=True), torch.tensor(S)


def test_num_large_losses_is_the_exact_product():
    assert num_large_losses(16, 20, 1, 0.002) == 0  # epoch 1: plain AN
    assert num_large_losses(16, 20, 2, 0.002) == 1  # ceil(0.64)
    assert num_large_losses(16, 80, 4, 0.002) == 8  # ceil(7.68)
    # 1000 * 3 * 0.001 is 3.0000000000000004 in floats: k stays 3
    assert num_large_losses(10, 100, 4, 0.001) == 3
    # 40 entries at 0.5 % in epoch 6: exactly 1 (repeated float
    # subtractions of the rate give 1.0000000000000009, hence 2)
    assert num_large_losses(8, 5, 6, 0.005) == 1
    assert num_large_losses(2, 3, 5, 1.) == 6  # never more than B x C


def test_selection_takes_the_largest_unobserved_losses():
    z, s = tensors()
    assert large_loss_selection(z, s, 0).sum() == 0
    assert large_loss_selection(z, s, 1).nonzero().tolist() == [[1, 1]]
    assert large_loss_selection(z, s, 2).nonzero().tolist() == [[1, 0],
                                                                [1, 1]]
    # more than the unobserved entries: all of them, never an observed one
    assert large_loss_selection(z, s, 6).tolist() == [[False, True, True],
                                                      [True, True, False]]
    # a tie at the k-th value selects every tied entry (>= k-th value)
    tied = torch.tensor([[5., 1., 1.], [1., 0., 5.]])
    assert large_loss_selection(tied, torch.tensor(S), 1).sum() == 3


def test_hand_computed_ll_r_and_ll_ct():
    """Epoch 3, delta 0.2: k = ceil(6 * 2 * 0.2) = 3 of the four unobserved
    entries, those with logits 3, 1 and 0."""
    loss = LLLoss('LL-R', rate=0.2)
    loss.set_epoch(2, 10)  # 0-based 2: the third epoch
    z, s = tensors()
    value = loss(z, s)
    # kept: two positives (-log p = softplus(-z)) and the unobserved -1
    kept = softplus(-2.) + softplus(2.) + softplus(-1.)
    assert value.item() == pytest.approx(kept / 6)
    value.backward()
    p = torch.sigmoid(torch.tensor(Z))
    expected = torch.tensor([[p[0, 0] - 1, 0., p[0, 2]],
                             [0., 0., p[1, 2] - 1]]) / 6
    torch.testing.assert_close(z.grad, expected)

    loss = LLLoss('LL-Ct', rate=0.2)
    loss.set_epoch(2, 10)
    z, s = tensors()
    value = loss(z, s)
    corrected = softplus(-0.) + softplus(-1.) + softplus(-3.)
    assert value.item() == pytest.approx((kept + corrected) / 6)
    value.backward()
    expected = torch.tensor([[p[0, 0] - 1, p[0, 1] - 1, p[0, 2]],
                             [p[1, 0] - 1, p[1, 1] - 1, p[1, 2] - 1]]) / 6
    torch.testing.assert_close(z.grad, expected)


def test_epoch_schedule():
    z, s = tensors()
    an = (softplus(-2.) + softplus(0.) + softplus(-1.) + softplus(1.) +
          softplus(3.) + softplus(2.)) / 6
    ks = {}
    for scheme in ('LL-R', 'LL-Ct', 'LL-Cp'):
        loss = LLLoss(scheme, rate=0.1)
        ks[scheme] = []
        for epoch in range(5):
            logged = loss.set_epoch(epoch, 5)
            ks[scheme].append(loss.num_modified(2, 3))
            if epoch == 0:
                assert logged == dict(ll_rate=0.)
        loss.set_epoch(0, 5)
        bank = dict(pseudo_label=torch.zeros(2, 3, dtype=torch.int8),
                    write_corrections=lambda mask: None)
        extra = bank if scheme == 'LL-Cp' else {}
        # epoch 1 is plain AN
        assert loss(z, s, **extra).item() == pytest.approx(an)
    # ceil(6 (e - 1) 0.1): 0, 1, 2, 2, 3; LL-Cp: ceil(6 * 0.1) from epoch 2
    assert ks['LL-R'] == ks['LL-Ct'] == [0, 1, 2, 2, 3]
    assert ks['LL-Cp'] == [0, 1, 1, 1, 1]


def test_ll_cp_reads_and_writes_permanent_corrections():
    loss = LLLoss('LL-Cp', rate=0.2)  # k = ceil(6 * 0.2) = 2
    loss.set_epoch(1, 10)
    z, s = tensors()
    # an earlier epoch corrected entry (0, 2): it is a positive now, and
    # not a candidate; the two largest unobserved are then 3 and 1
    state = torch.tensor([[0, 0, 1], [0, 0, 0]], dtype=torch.int8)
    written = []
    value = loss(z, s, pseudo_label=state,
                 write_corrections=written.append)
    assert written[0].nonzero().tolist() == [[1, 0], [1, 1]]
    expected = (softplus(-2.) + softplus(0.) + softplus(1.) + softplus(-1.) +
                softplus(-3.) + softplus(2.)) / 6
    assert value.item() == pytest.approx(expected)
    with pytest.raises(ValueError, match='CorrectedLabelBank'):
        loss(z, s)


def test_matches_a_direct_float64_formula():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(8, 7, generator=g) * 4
    s = torch.zeros(8, 7)
    s[torch.arange(8), torch.randint(0, 7, (8, ), generator=g)] = 1
    selected = large_loss_selection(z, s, 9)
    assert selected.sum() == 9 and not (selected & (s > 0)).any()
    assert torch.equal(selected,
                       reference.large_losses(z.double(), s.double(), 9))
    for correct in (False, True):
        z64 = z.double().requires_grad_()
        direct = reference.ll(z64, s.double(), selected, correct)
        direct.backward()
        z32 = z.clone().requires_grad_()
        value = ll_loss(z32, s, selected, correct)
        value.backward()
        torch.testing.assert_close(value.double(), direct.detach())
        torch.testing.assert_close(z32.grad.double(), z64.grad)


def test_gradcheck():

    class Float64Op(torch.autograd.Function):

        @staticmethod
        def forward(ctx, z, s, selected, correct):
            value, grad = ll_value_and_grad(z, s, selected, correct)
            ctx.save_for_backward(grad)
            return value

        @staticmethod
        def backward(ctx, grad_output):
            return ctx.saved_tensors[0] * grad_output, None, None, None

    z = torch.tensor(Z, dtype=torch.double, requires_grad=True)
    s = torch.tensor(S, dtype=torch.double)
    selected = large_loss_selection(z, s, 2)
    for correct in (False, True):
        assert torch.autograd.gradcheck(
            lambda x: Float64Op.apply(x, s, selected, correct), (z, ))


def test_finite_at_saturation():
    z = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                     requires_grad=True)
    s = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    loss = LLLoss('LL-Ct', rate=0.5)
    loss.set_epoch(1, 2)
    value = loss(z, s)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(z.grad).all()


def test_needs_the_epoch_hook_and_valid_settings():
    z, s = tensors()
    with pytest.raises(RuntimeError, match='SPMLEpochHook'):
        LLLoss('LL-R', rate=0.002)(z, s)
    with pytest.raises(ValueError, match='scheme must be one of'):
        LLLoss('LL-Cr', rate=0.002)
    for bad in (-0.1, 2, '0.2'):
        with pytest.raises(ValueError, match=r'rate \(delta\)'):
            LLLoss('LL-R', rate=bad)
