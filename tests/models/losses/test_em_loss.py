import pytest
import torch

from spml_mm.models.losses import EMLoss, em_loss
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    state = torch.zeros(6, 5, dtype=torch.int8)
    state[[0, 1, 2, 5], [1, 3, 0, 4]] = -1
    soft = torch.rand(6, 5, generator=g) * 0.2
    return logits, target, state, soft


def test_em_matches_reference(batch):
    logits, target, _, _ = batch
    for alpha in (0.01, 0.2, 1.):
        torch.testing.assert_close(
            EMLoss(alpha=alpha)(logits, target).double(),
            reference.em(logits.double(), target.double(), alpha))


def test_em_apl_matches_reference(batch):
    logits, target, state, soft = batch
    loss = EMLoss(alpha=0.1, beta=0.9)(logits, target, state, soft)
    torch.testing.assert_close(
        loss.double(),
        reference.em(logits.double(), target.double(), 0.1, 0.9,
                     state == -1, soft.double()))
    # a bank entry on an observed positive keeps the positive term
    state2 = state.clone()
    state2[0, 0] = -1
    torch.testing.assert_close(
        EMLoss(alpha=0.1, beta=0.9)(logits, target, state2, soft), loss)


def test_gradient_follows_eq5(batch):
    """dL/dz in the paper's Eq. 5 form: -e^-g / (1 + e^-g) on the positive,
    -alpha e^-g log(e^-g) / (1 + e^-g)^2 on an unobserved entry, and the BCE
    gradient beta (p - t) on a pseudo-negative; each over B*C (the mean)."""
    logits, target, state, soft = batch
    z = logits.double().requires_grad_()
    alpha, beta = 0.2, 0.4
    em_loss(z, target, alpha, beta, state == -1, soft.double()).backward()
    g = logits.double()
    e = torch.exp(-g)
    expected = torch.where(target > 0, -e / (1 + e),
                           -alpha * e * torch.log(e) / (1 + e)**2)
    expected = torch.where((state == -1) & (target == 0),
                           beta * (torch.sigmoid(g) - soft.double()),
                           expected)
    torch.testing.assert_close(z.grad, expected / target.numel())


def test_finite_at_saturation():
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                          requires_grad=True)
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    state = torch.tensor([[0, 0, -1], [0, -1, 0]], dtype=torch.int8)
    soft = torch.full((2, 3), 0.05)
    loss = EMLoss(alpha=1., beta=1.)(logits, target, state, soft)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # saturated unobserved entries have zero entropy; each wrong positive
    # costs 100 and each pseudo-negative at z=+100 costs 0.95 * 100
    torch.testing.assert_close(loss, torch.tensor((2 * 100. + 2 * 95.) / 6))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        bf16 = EMLoss()(logits.detach().bfloat16(), target, state, soft)
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16)


def test_bad_input(batch):
    logits, target, state, soft = batch
    with pytest.raises(ValueError, match='alpha must be a float >= 0'):
        EMLoss(alpha=-0.1)
    with pytest.raises(ValueError, match='beta must be a float >= 0'):
        EMLoss(beta=-1)
    with pytest.raises(ValueError, match='both be given'):
        EMLoss()(logits, target, state)
