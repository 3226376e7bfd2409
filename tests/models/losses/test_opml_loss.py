import numpy as np
import pytest
import torch

from spml_mm.models.losses import OPMLLoss, high_rank_penalty, opml_loss
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    full = target.clone()
    full[0, 3] = full[2, 4] = full[2, 0] = full[5, 1] = 1
    return logits, target, full


@pytest.mark.parametrize('a,b', [(0.5, 0.5), (0.2, 0.7), (0.9, 0.1),
                                 (0.05, 0.95)])
def test_matches_the_formula(batch, a, b):
    """a = b = 1/2 is ZLPR (alpha = beta = 1)."""
    logits, target, full = batch
    alpha, beta = a / (1 - a), b / (1 - b)
    for label in (target, full):
        torch.testing.assert_close(
            OPMLLoss(a=a, b=b)(logits, label).double(),
            reference.opml(logits.double(), label.double(), alpha, beta))
    # soft labels go through the same formula
    soft = torch.rand(6, 5, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(
        opml_loss(logits, soft, alpha, beta).double(),
        reference.opml(logits.double(), soft.double(), alpha, beta))


def test_gradient_by_hand():
    """dL/dz_j = (1-y_j) e^{z_j} / (alpha + S_N) - y_j e^{-z_j} / (beta +
    S_P), divided by B."""
    z = torch.tensor([[0.5, -1., 2.], [1.5, 0.2, -0.3]], dtype=torch.float64)
    y = torch.tensor([[1., 0., 0.], [0., 1., 1.]], dtype=torch.float64)
    a, b = 0.25, 0.8
    alpha, beta = 1 / 3, 4.
    logits = z.clone().float().requires_grad_()
    OPMLLoss(a=a, b=b)(logits, y.float()).backward()
    s_neg = alpha + ((1 - y) * z.exp()).sum(1, keepdim=True)
    s_pos = beta + (y * (-z).exp()).sum(1, keepdim=True)
    expected = ((1 - y) * z.exp() / s_neg - y * (-z).exp() / s_pos) / 2
    torch.testing.assert_close(logits.grad.double(), expected)
    # e.g. entry (0, 1): e^-1 / (1/3 + e^-1 + e^2) / 2
    assert float(expected[0, 1]) == pytest.approx(
        np.exp(-1) / (1 / 3 + np.exp(-1) + np.exp(2)) / 2)


@pytest.mark.parametrize('shape', [(4, 7), (9, 5), (6, 6)])
def test_high_rank_against_numpy_svd(shape):
    g = torch.Generator().manual_seed(sum(shape))
    probs = torch.rand(*shape, generator=g)
    sigma = np.linalg.svd(probs.double().numpy(), compute_uv=False)
    assert len(sigma) == min(shape)
    delta = 0.05
    expected = -np.log(sigma**2 + delta).sum()
    assert float(high_rank_penalty(probs, delta)) == pytest.approx(
        expected, rel=1e-5)
    # as a term of the loss: lambda * penalty on sigmoid(z)
    logits = torch.randn(*shape, generator=g)
    target = torch.zeros(*shape)
    target[:, 0] = 1
    lam = 0.01
    sig = np.linalg.svd(torch.sigmoid(logits).double().numpy(),
                        compute_uv=False)
    with_rank = OPMLLoss(rank_weight=lam, rank_delta=delta)(logits, target)
    without = OPMLLoss()(logits, target)
    assert float(with_rank - without) == pytest.approx(
        -lam * np.log(sig**2 + delta).sum(), rel=1e-4, abs=1e-6)


def test_high_rank_gradient_with_repeated_rows():
    """Identical rows (rank 1): zero and repeated singular values still
    give a finite gradient, equal to -2 U diag(sigma / (sigma^2 + delta))
    V^T."""
    row = torch.tensor([[0.2, 0.9, 0.4]])
    for probs in (row.repeat(5, 1), row.repeat(2, 1)):
        probs = probs.clone().requires_grad_()
        high_rank_penalty(probs, 0.1).backward()
        u, s, vt = np.linalg.svd(probs.detach().double().numpy(),
                                 full_matrices=False)
        expected = -2 * (u * (s / (s**2 + 0.1))) @ vt
        assert torch.isfinite(probs.grad).all()
        np.testing.assert_allclose(probs.grad.numpy(), expected, atol=1e-5)


def test_soft_labels_and_corrections_from_the_bank():
    """y = 1 on observed and corrected positives, p * AP_k^gamma on the
    other entries (p detached); no AP yet (-1) means y = 0."""
    logits = torch.tensor([[0.4, -1.2, 2.0], [1.0, 0.3, -0.5]],
                          requires_grad=True)
    target = torch.tensor([[1., 0., 0.], [0., 1., 0.]])
    pseudo = torch.tensor([[0, 0, 1], [0, 0, 0]], dtype=torch.int8)
    class_ap = torch.tensor([0.25, 1.0, 0.5])
    loss_module = OPMLLoss(a=0.4, b=0.7, soft_labels=True, gamma=2.)
    loss = loss_module(logits, target, pseudo, class_ap)
    p = torch.sigmoid(logits.detach())
    y = torch.tensor([[1., p[0, 1] * 1., 1.],
                      [p[1, 0] * 0.0625, 1., p[1, 2] * 0.25]])
    torch.testing.assert_close(
        y.double(),
        reference.opml_labels(p.double(), target.double(), pseudo == 1,
                              class_ap.double(), 2.))
    torch.testing.assert_close(
        loss.double(),
        reference.opml(logits.detach().double(), y.double(), 0.4 / 0.6,
                       0.7 / 0.3))
    # the soft labels are constants: the gradient is that of fixed y
    loss.backward()
    fixed = logits.detach().clone().requires_grad_()
    opml_loss(fixed, y, 0.4 / 0.6, 0.7 / 0.3).backward()
    torch.testing.assert_close(logits.grad, fixed.grad)
    # before the first epoch end: plain OPML with the corrected positive
    unknown = -torch.ones(3)
    torch.testing.assert_close(
        loss_module(logits, target, pseudo, unknown),
        OPMLLoss(a=0.4, b=0.7)(logits, target + pseudo.float()))
    # soft labels off: the bank's AP is ignored
    torch.testing.assert_close(
        OPMLLoss(a=0.4, b=0.7)(logits, target, pseudo, class_ap),
        OPMLLoss(a=0.4, b=0.7)(logits, target + pseudo.float()))


def test_finite_at_saturation():
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                          requires_grad=True)
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    loss = OPMLLoss(a=0.3, b=0.6, rank_weight=0.1)(logits, target)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # row 0: log(3/7 + 2 e^100) + log(1.5 + e^100) = 100 + log 2 + 100;
    # row 1: log(3/7 + e^100 + e^-100) + log(1.5 + e^100) = 200
    assert float(OPMLLoss(a=0.3, b=0.6)(logits.detach(), target)) == \
        pytest.approx(200. + np.log(2) / 2)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        bf16 = OPMLLoss(rank_weight=0.1)(logits.detach().bfloat16(), target)
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16)


def test_bad_input(batch):
    logits, target, _ = batch
    for kwargs, name in ((dict(a=0.), 'a must'), (dict(a=1.), 'a must'),
                         (dict(b=1.5), 'b must'), (dict(b=-0.1), 'b must'),
                         (dict(rank_weight=-1e-3), 'rank_weight'),
                         (dict(rank_delta=0.), 'rank_delta'),
                         (dict(gamma=-1.), 'gamma')):
        with pytest.raises(ValueError, match=name):
            OPMLLoss(**kwargs)
    with pytest.raises(ValueError, match='OPMLLabelBank'):
        OPMLLoss(soft_labels=True)(logits, target)
