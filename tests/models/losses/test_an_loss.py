import pytest
import torch
import torch.nn.functional as F

from spml_mm.models.losses import ANLoss, an_loss
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    return logits, target


def test_an_equals_bce(batch):
    logits, target = batch
    expected = F.binary_cross_entropy_with_logits(logits, target)
    torch.testing.assert_close(ANLoss()(logits, target), expected)


def test_label_smoothing(batch):
    logits, target = batch
    torch.testing.assert_close(
        ANLoss(label_smoothing=0.1)(logits, target).double(),
        reference.an(logits.double(), target.double(), epsilon=0.1))


def test_wan_weights_unobserved_terms(batch):
    logits, target = batch
    expected = reference.an(logits.double(), target.double(), lam=1 / 4)
    torch.testing.assert_close(
        ANLoss(unobserved_weight='wan')(logits, target).double(), expected)
    torch.testing.assert_close(
        an_loss(logits, target, unobserved_weight=1 / 4).double(), expected)


def test_finite_at_saturation():
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]],
                          requires_grad=True)
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    loss = ANLoss(label_smoothing=0.1)(logits, target)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # each wrong saturated entry costs 100 nats, each right one nothing
    torch.testing.assert_close(
        ANLoss()(logits.detach(), target), torch.tensor(5 * 100. / 6))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        bf16 = ANLoss()(logits.detach().bfloat16(), target)
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16)


def test_bad_input(batch):
    logits, target = batch
    with pytest.raises(ValueError, match='label_smoothing'):
        ANLoss(label_smoothing=0.5)
    with pytest.raises(ValueError, match='unobserved_weight'):
        ANLoss(unobserved_weight=-1)
