import math

import pytest
import torch

from spml_mm.models.losses import EPRLoss, epr_loss
from spml_mm.models.losses.epr_loss import epr_value_and_grad
from tests.models.losses import reference


class Float64Op(torch.autograd.Function):
    """epr_value_and_grad's value and gradient in float64, for gradcheck."""

    @staticmethod
    def forward(ctx, z, s, k):
        value, grad = epr_value_and_grad(z, s, k)
        ctx.save_for_backward(grad)
        return value

    @staticmethod
    def backward(ctx, grad_output):
        grad, = ctx.saved_tensors
        return grad * grad_output, None, None


def batch():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(5, 4, generator=g) * 3
    s = torch.zeros(5, 4)
    s[torch.arange(5), torch.tensor([0, 3, 1, 1, 2])] = 1
    return z, s


def test_hand_computed_value_and_gradient():
    # one image, two classes: p = (1/2, sigmoid(ln 3) = 3/4), positive 0,
    # k = 2: L = ln 2 / 2 + (5/4 - 2)^2 / 4 = ln 2 / 2 + 9/64
    z = torch.tensor([[0., math.log(3.)]], requires_grad=True)
    s = torch.tensor([[1., 0.]])
    loss = EPRLoss(expected_positives=2.)(z, s)
    assert loss.item() == pytest.approx(math.log(2.) / 2 + 9 / 64)
    loss.backward()
    # dL/dz0 = (1/2 - 1) / 2 + 2 (-3/4) (1/4) / 4, dL/dz1 = 2 (-3/4) (3/16) / 4
    expected = [-0.25 - 3 / 32, -9 / 128]
    assert z.grad[0].tolist() == pytest.approx(expected)


def test_matches_the_paper_formula():
    z, s = batch()
    for k in (0.5, 1.5, 4.):
        expected = reference.epr(z.double(), s.double(), k)
        torch.testing.assert_close(EPRLoss(k)(z, s).double(), expected)
        # autograd of the direct formula gives the analytic gradient
        z64 = z.double().requires_grad_()
        reference.epr(z64, s.double(), k).backward()
        z32 = z.clone().requires_grad_()
        epr_loss(z32, s, k).backward()
        torch.testing.assert_close(z32.grad.double(), z64.grad)


def test_gradcheck():
    z, s = batch()
    z = z.double().requires_grad_()
    for k in (1.5, 31.4):
        assert torch.autograd.gradcheck(
            lambda x: Float64Op.apply(x, s.double(), k), (z, ))


def test_finite_at_saturation():
    z = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                     requires_grad=True)
    s = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    loss = epr_loss(z, s, 2.)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(z.grad).all()
    # -log p = 100 on both positives; mean count (2 + 1) / 2, k = 2
    assert loss.item() == pytest.approx(200 / 6 + 0.5**2 / 9)


def test_unobserved_entries_only_enter_through_the_count():
    z, s = batch()
    z = z.clone().requires_grad_()
    # k equal to the batch's mean count: the penalty and its gradient vanish
    k = torch.sigmoid(z).sum(1).mean().item()
    epr_loss(z, s, k).backward()
    assert (z.grad[s == 0].abs() < 1e-7).all()


@pytest.mark.parametrize('bad', [0, -1., '1.5', None])
def test_bad_expected_positives(bad):
    with pytest.raises(ValueError, match=r'expected_positives \(k\)'):
        EPRLoss(bad)
