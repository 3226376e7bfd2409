"""OPML-SP's soft labels in the positive sum: the pull on unobserved logits
that ``soft_positive_sum=False`` removes."""
import math

import pytest
import torch

from spml_mm.models.losses import OPMLLoss
from spml_mm.models.losses.opml_loss import opml_value_and_grad

AP = 0.5
C = 20


def one_row(unobserved_logit):
    """Logit 4 on the observed positive (class 0), ``unobserved_logit`` on
    the 19 others."""
    z = torch.full((1, C), float(unobserved_logit), dtype=torch.float64)
    z[0, 0] = 4.
    y = torch.zeros(1, C, dtype=torch.float64)
    y[0, 0] = 1.
    return z, y


def hand_gradient(u, soft_positive_sum):
    """dL/dz of an unobserved entry at logit u and of the positive at 4,
    alpha = beta = 1, y_k = sigmoid(u) AP, written out by hand."""
    y = AP / (1 + math.exp(-u))
    negative_sum = 1 + (C - 1) * (1 - y) * math.exp(u)
    d_unobserved = (1 - y) * math.exp(u) / negative_sum
    positive_sum = 1 + math.exp(-4.)
    if soft_positive_sum:
        positive_sum += (C - 1) * y * math.exp(-u)
        d_unobserved -= y * math.exp(-u) / positive_sum
    return d_unobserved, -math.exp(-4.) / positive_sum


@pytest.mark.parametrize('soft_positive_sum', [True, False])
@pytest.mark.parametrize('u', [-10., -3., 0.])
def test_gradient_matches_hand_computation(u, soft_positive_sum):
    z, y = one_row(u)
    _, grad = opml_value_and_grad(
        z, y, soft_weight=torch.full((C,), AP, dtype=torch.float64),
        soft_positive_sum=soft_positive_sum)
    d_unobserved, d_positive = hand_gradient(u, soft_positive_sum)
    assert grad[0, 1].item() == pytest.approx(d_unobserved, rel=1e-9)
    assert grad[0, 0].item() == pytest.approx(d_positive, rel=1e-9)


def test_positive_sum_pulls_confident_negatives_up():
    """With soft labels in P, an unobserved entry at p = 5e-5 is pushed up
    by about AP / (1 + sum) (gradient descent raises it), and the observed
    positive's push falls tenfold; without, the entry is pushed down."""
    z, y = one_row(-10.)
    weight = torch.full((C,), AP, dtype=torch.float64)
    _, pulled = opml_value_and_grad(z, y, soft_weight=weight)
    _, kept = opml_value_and_grad(z, y, soft_weight=weight,
                                  soft_positive_sum=False)
    assert pulled[0, 1] == pytest.approx(-AP / (1 + (C - 1) * AP), rel=1e-2)
    assert kept[0, 1] > 0
    assert pulled[0, 0] / kept[0, 0] < 0.1


def test_negative_sum_only_against_autograd():
    """soft_positive_sum=False: N = log(alpha + sum (1 - y) e^z) with y = p
    AP (constant), P = log(beta + sum over hard positives of e^-z)."""
    torch.manual_seed(0)
    z = torch.randn(6, 7, dtype=torch.float64) * 3
    y = torch.zeros(6, 7, dtype=torch.float64)
    y[torch.arange(6), torch.randint(0, 7, (6,))] = 1
    weight = torch.rand(7, dtype=torch.float64)
    alpha, beta = 0.7, 1.3
    value, grad = opml_value_and_grad(z, y, alpha, beta, soft_weight=weight,
                                      soft_positive_sum=False)
    leaf = z.clone().requires_grad_()
    soft = torch.where(y > 0, y, torch.sigmoid(z) * weight)
    literal = (torch.log(alpha + ((1 - soft) * leaf.exp()).sum(1)) +
               torch.log(beta + (y * (-leaf).exp()).sum(1))).mean()
    literal.backward()
    assert value.item() == pytest.approx(literal.item(), rel=1e-9)
    torch.testing.assert_close(grad, leaf.grad, rtol=1e-9, atol=1e-12)


def test_module_passes_the_switch():
    z, y = one_row(-10.)
    ap = torch.full((C,), AP)
    loss = OPMLLoss(soft_labels=True, soft_positive_sum=False)
    leaf = z.float().requires_grad_()
    loss(leaf, y.float(), class_ap=ap).backward()
    assert leaf.grad[0, 1] > 0
    assert 'soft_positive_sum=False' in repr(loss)
