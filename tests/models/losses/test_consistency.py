import math

import pytest
import torch

from spml_mm.models.losses import ViewConsistency, view_consistency
from tests.models.losses import reference


def logit(p):
    return math.log(p / (1 - p))


def test_three_views_by_hand():
    # one sample, two classes; probabilities of x, x', x''
    probs = [[0.9, 0.2], [0.6, 0.2], [0.5, 0.6]]
    scores = torch.tensor([[[logit(a), logit(b)]] for a, b in probs])
    # ||x - x'||^2 = 0.09, ||x - x''||^2 = 0.16 + 0.16, ||x' - x''||^2 =
    # 0.01 + 0.16
    expected = 0.09 + 0.32 + 0.17
    assert view_consistency(scores).item() == pytest.approx(expected)
    assert ViewConsistency(alpha=0.7)(scores).item() == pytest.approx(
        0.7 * expected)


def test_mean_over_samples_and_any_number_of_views():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 3, 5, generator=g)
    for views in (scores, scores[:2]):  # six pairs, one pair
        torch.testing.assert_close(
            view_consistency(views).double(),
            reference.consistency(views.double()), rtol=1e-5, atol=1e-7)


def test_gradient_reaches_every_view():
    # (the second class not symmetric about the middle view, whose
    # gradient would be exactly 0)
    scores = torch.tensor([[[0.5, -1.]], [[2., 0.]], [[-1., 1.5]]],
                          requires_grad=True)
    ViewConsistency(alpha=1.)(scores).backward()
    assert (scores.grad.abs() > 0).all()
    # d/dz_v = 2 p_v (1 - p_v) sum_{u != v} (p_v - p_u)
    p = torch.sigmoid(scores.detach())
    expected = torch.stack([
        2 * p[v] * (1 - p[v]) * sum(p[v] - p[u] for u in range(3) if u != v)
        for v in range(3)
    ])
    torch.testing.assert_close(scores.grad, expected)


def test_finite_at_saturation():
    scores = torch.tensor([[[100., -100.]], [[-100., 100.]]],
                          requires_grad=True)
    loss = view_consistency(scores)
    loss.backward()
    assert loss.item() == pytest.approx(2.)
    assert torch.isfinite(scores.grad).all()


def test_bad_input():
    with pytest.raises(ValueError, match='alpha'):
        ViewConsistency(alpha=-0.1)
    with pytest.raises(ValueError, match='at least 2 views'):
        ViewConsistency()(torch.zeros(1, 4, 3))
    with pytest.raises(ValueError, match=r'\(V, B, C\)'):
        view_consistency(torch.zeros(4, 3))
