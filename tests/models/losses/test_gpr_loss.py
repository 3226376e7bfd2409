import pytest
import torch

from spml_mm.models.losses import GPRLoss, GRLoss
from tests.models.losses import reference

T = 8


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    state = torch.zeros(6, 5, dtype=torch.int8)
    state[[0, 1, 2, 5, 3], [1, 3, 0, 4, 2]] = 1
    state[[0, 2, 4, 5], [2, 4, 1, 3]] = -1
    state[1, 1] = -1  # a pseudo-label on an observed positive: ignored
    return logits, target, state


def release_schedule(e, beta, alpha=(0.5, 2, 0.8, 0.5)):
    """AEVLP's train.py schedule (GR's), 1-based epoch ``e``."""
    w0, wT, b0, bT = beta
    mu0, s0, muT, sT = alpha
    return (w0 + (wT - w0) * (e - 1) / T, b0 + (bT - b0) * (e - 1) / T,
            mu0 + (muT - mu0) * e / T, s0 + (sT - s0) * e / T)


@pytest.mark.parametrize('epoch', [0, 4, 7])
@pytest.mark.parametrize(
    'beta,q3,lam,reg,k',
    [((0., 2., -2., -2.), 1., (0.4, 0.7), 0.05, 1.5),  # VOC
     ((0., 10., -2., -8.), 1.5, (0.2, 0.8), 0.01, 3.)])  # CUB's q3, lam
def test_values_and_gradient_against_reference(batch, epoch, beta, q3, lam,
                                               reg, k):
    logits, target, state = batch
    loss = GPRLoss(w=beta[:2], b=beta[2:], q3=q3, pseudo_weight_range=lam,
                   reg_weight=reg, expected_positives=k)
    loss.set_epoch(epoch, T)
    w, b, mu, sigma = release_schedule(epoch + 1, beta)
    z = logits.double().requires_grad_()
    loss(z, target, state).backward()
    z64 = logits.double().requires_grad_()
    expected = reference.gpr(z64, target.double(), state == 1, state == -1,
                             w, b, mu, sigma, 0.01, q3, lam[0], lam[1], 0.9,
                             reg, k)
    expected.backward()
    torch.testing.assert_close(
        loss(logits, target, state).double(), expected.detach(), rtol=1e-5,
        atol=1e-6)
    # v, k and the pseudo-label weight u read the detached p
    torch.testing.assert_close(z.grad, z64.grad, rtol=1e-5, atol=1e-8)


def test_without_pseudo_labels_is_gr_plus_regulariser(batch):
    logits, target, _ = batch
    gpr, gr = GPRLoss(reg_weight=0.), GRLoss()
    gpr.set_epoch(3, T)
    gr.set_epoch(3, T)
    torch.testing.assert_close(gpr(logits, target), gr(logits, target))
    p = torch.sigmoid(logits.double())
    with_reg = GPRLoss(reg_weight=0.5, expected_positives=2.)
    with_reg.set_epoch(3, T)
    torch.testing.assert_close(
        with_reg(logits, target).double(),
        gr(logits, target).double() +
        0.5 * reference.expected_positives_penalty(p, 2.))


def test_observed_negatives_keep_gr_term(batch):
    logits, target, state = batch
    negative = torch.zeros(6, 5, dtype=torch.bool)
    negative[0, 1] = negative[4, 1] = True  # both carry pseudo-labels
    loss = GPRLoss()
    loss.set_epoch(2, T)
    w, b, mu, sigma = release_schedule(3, (0., 2., -2., -2.))
    s = target.double() - negative.double()
    torch.testing.assert_close(
        loss(logits, target, state, negative).double(),
        reference.gpr(logits.double(), s, state == 1, state == -1, w, b, mu,
                      sigma, 0.01, 1., 0.4, 0.7, 0.9, 0.05, 1.5),
        rtol=1e-5,
        atol=1e-6)


@pytest.mark.parametrize('dtype', [None, torch.bfloat16])
def test_finite_at_saturation(dtype):
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]])
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    state = torch.tensor([[1, 0, -1], [0, -1, 1]], dtype=torch.int8)
    loss = GPRLoss(w=(0., 10.), b=(-2., -8.), q3=1.5)
    loss.set_epoch(7, T)
    z = logits.clone().requires_grad_()
    if dtype is None:
        out = loss(z, target, state)
    else:
        with torch.autocast('cpu', dtype=dtype):
            out = loss(z.to(dtype), target, state)
    out.backward()
    assert out.dtype == torch.float32
    assert torch.isfinite(out) and torch.isfinite(z.grad).all()


def test_bad_input(batch):
    logits, target, state = batch
    with pytest.raises(ValueError, match=r'pseudo_weight_range must be '
                       r'\(lambda_2, lambda_1\)'):
        GPRLoss(pseudo_weight_range=(0.7, 0.4))
    with pytest.raises(ValueError, match='reg_weight must be a float >= 0'):
        GPRLoss(reg_weight=-0.1)
    with pytest.raises(ValueError, match=r'expected_positives \(k\) must be'):
        GPRLoss(expected_positives=0)
    with pytest.raises(ValueError, match=r'pseudo_label of shape \(6, 4\)'):
        GPRLoss()(logits, target, state[:, :4])
