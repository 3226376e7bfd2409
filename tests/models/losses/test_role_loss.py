import math

import pytest
import torch

from spml_mm.models.losses import ROLELoss, role_loss
from spml_mm.models.losses.role_loss import role_value_and_grad
from tests.models.losses import reference


def batch():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(5, 4, generator=g) * 3
    u = torch.randn(5, 4, generator=g) * 2
    s = torch.zeros(5, 4)
    s[torch.arange(5), torch.tensor([0, 3, 1, 1, 2])] = 1
    return z, s, u


def test_hand_computed_value():
    # one image, one class, observed positive, p = q = 1/2, k = 1:
    # 0.5 (ln 2 + ln 2 + 2 ln 2) + 0.5 ((1/2 - 1)^2 * 2) = 2 ln 2 + 1/4
    z = torch.zeros(1, 1, requires_grad=True)
    value = role_loss(z, torch.ones(1, 1), torch.zeros(1, 1), 1.)
    assert value.item() == pytest.approx(2 * math.log(2) + 0.25)
    value.backward()
    # dL/dz = [(p - 1) + p - q] / 2 + 0.5 * 2 (m - k) p (1 - p) = -1/4 - 1/8
    assert z.grad.item() == pytest.approx(-0.375)


def test_matches_the_paper_formula_on_both_sides():
    # the stop-gradients make the value no potential of the gradient (no
    # gradcheck): the gradients are checked against autograd of the formula
    z, s, u = batch()
    for k in (1.5, 3.):
        z64 = z.double().requires_grad_()
        u64 = u.double().requires_grad_()
        expected = reference.role(z64, s.double(), u64, k)
        expected.backward()
        value, grad_z = role_value_and_grad(z, s, u, k)
        value_u, grad_u = role_value_and_grad(u, s, z, k)
        torch.testing.assert_close(value.double(), expected.detach())
        torch.testing.assert_close(value_u.double(), expected.detach())
        torch.testing.assert_close(grad_z.double(), z64.grad)
        torch.testing.assert_close(grad_u.double(), u64.grad)


def test_module_steps_the_estimates_with_their_gradient():
    z, s, u = batch()
    stepped = []
    loss = ROLELoss(expected_positives=1.5)
    value = loss(z, s, estimate_logits=u, step_estimates=stepped.append)
    torch.testing.assert_close(value, role_value_and_grad(z, s, u, 1.5)[0])
    torch.testing.assert_close(stepped[0],
                               role_value_and_grad(u, s, z, 1.5)[1])
    with pytest.raises(ValueError, match='LabelEstimateTable'):
        loss(z, s)
    with pytest.raises(ValueError, match=r'expected_positives \(k\)'):
        ROLELoss(0)


def test_finite_at_saturation():
    z = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                     requires_grad=True)
    s = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    value = role_loss(z, s, -z.detach(), 2.)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(z.grad).all()
