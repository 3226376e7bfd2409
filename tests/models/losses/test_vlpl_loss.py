import pytest
import torch

from spml_mm.models.losses import GPRLoss, VLPLLoss, vlpl_loss
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    state = torch.zeros(6, 5, dtype=torch.int8)
    state[[0, 1, 2, 5, 3], [1, 3, 0, 4, 2]] = 1
    state[[0, 2, 4, 5], [2, 4, 1, 3]] = -1
    state[0, 0] = 1  # a pseudo-label on an observed positive: ignored
    return logits, target, state


@pytest.mark.parametrize('alpha,beta_pos,beta_neg,rho',
                         [(0.2, 0.7, 0., 0.9), (0.01, 1., 0.3, 0.8)])
def test_values_and_gradient_against_reference(batch, alpha, beta_pos,
                                               beta_neg, rho):
    logits, target, state = batch
    loss = VLPLLoss(alpha=alpha, pseudo_positive_weight=beta_pos,
                    pseudo_negative_weight=beta_neg,
                    pseudo_positive_target=rho)
    z = logits.double().requires_grad_()
    loss(z, target, state).backward()
    z64 = logits.double().requires_grad_()
    expected = reference.vlpl(z64, target.double(), state == 1, state == -1,
                              alpha, beta_pos, beta_neg, rho)
    expected.backward()
    torch.testing.assert_close(
        loss(logits, target, state).double(), expected.detach(), rtol=1e-5,
        atol=1e-7)
    torch.testing.assert_close(z.grad, z64.grad, rtol=1e-5, atol=1e-8)


def test_without_bank_is_em(batch):
    logits, target, _ = batch
    torch.testing.assert_close(
        VLPLLoss(alpha=0.1)(logits, target).double(),
        reference.em(logits.double(), target.double(), 0.1))


def test_observed_negatives(batch):
    logits, target, state = batch
    negative = torch.zeros(6, 5, dtype=torch.bool)
    negative[1, 3] = negative[4, 1] = True  # both carry pseudo-labels
    s = target.double() - negative.double()
    got = VLPLLoss()(logits, target, state, negative)
    torch.testing.assert_close(
        got.double(),
        reference.vlpl(logits.double(), s, state == 1, state == -1, 0.2,
                       0.7))


def test_finite_at_saturation():
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]])
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    state = torch.tensor([[1, 0, -1], [0, -1, 1]], dtype=torch.int8)
    z = logits.clone().requires_grad_()
    out = VLPLLoss(pseudo_negative_weight=0.5)(z, target, state)
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(z.grad).all()


def test_bad_input(batch):
    logits, target, state = batch
    with pytest.raises(ValueError, match='alpha must be a float >= 0'):
        VLPLLoss(alpha=-1)
    with pytest.raises(ValueError,
                       match=r'pseudo_positive_target \(rho\) must be in'):
        VLPLLoss(pseudo_positive_target=1.5)
    with pytest.raises(ValueError, match=r'pseudo_label of shape \(6, 4\)'):
        VLPLLoss()(logits, target, state[:, :4])


def test_matches_vlpl_loss_function(batch):
    logits, target, state = batch
    torch.testing.assert_close(
        VLPLLoss(alpha=0.1)(logits, target, state),
        vlpl_loss(logits, target, state == 1, state == -1, 0.1, 0.7, 0.,
                  0.9))


@pytest.mark.parametrize('loss', [VLPLLoss(), GPRLoss()])
def test_pseudo_labels_read_from_the_bank_states(loss):
    """The bank's states 1 / -1 / 0 select the positive and negative terms:
    no bank equals a bank of zeros, and a bank of another shape is refused
    naming both shapes."""
    if isinstance(loss, GPRLoss):
        loss.set_epoch(0, 10)
    torch.manual_seed(0)
    z = torch.randn(3, 4)
    s = torch.zeros(3, 4)
    s[:, 0] = 1
    state = torch.tensor([[0, 1, -1, 0]] * 3, dtype=torch.int8)
    assert loss(z, s) == loss(z, s, torch.zeros_like(state))
    assert loss(z, s, state) != loss(z, s)
    with pytest.raises(ValueError, match=r'pseudo_label of shape \(3, 3\) '
                       r'for logits of shape \(3, 4\)'):
        loss(z, s, state[:, :3])
