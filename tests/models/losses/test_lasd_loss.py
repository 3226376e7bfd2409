import pytest
import torch
from mmpretrain.models.losses import asymmetric_loss

from spml_mm.models.losses import (LASDLoss, an_loss, lasd_loss,
                                   theorem_5_4_lambda_neg)
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    return logits, target


@pytest.mark.parametrize('lambda_pos,lambda_neg,tau,gamma_pos,gamma_neg',
                         [(0.1, 0.05, 0.9, 0., 4.), (0.3, 0.2, 0.6, 1., 2.),
                          (0.5, 0.7, 0.2, 0.5, 1.5)])
def test_matches_reference(batch, lambda_pos, lambda_neg, tau, gamma_pos,
                           gamma_neg):
    logits, target = batch
    p = torch.sigmoid(logits)
    # the fixture has pseudo positives and pseudo negatives at each tau
    assert ((p > tau) & (target == 0)).any()
    assert ((p <= tau) & (target == 0)).any()
    expected = reference.lasd(logits.double(), target.double(), lambda_pos,
                              lambda_neg, tau, gamma_pos, gamma_neg)
    loss = LASDLoss(lambda_pos, tau, gamma_pos, gamma_neg,
                    lambda_neg=lambda_neg)(logits, target)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)


def test_lambda_neg_from_theorem_5_4():
    # 1 + lambda_pos (kbar - 1) = lambda_neg (K - kbar), VOC row of Table 4
    loss = LASDLoss(lambda_pos=0.1, tau=0.9, avg_positives=1.46,
                    num_classes=20)
    assert loss.lambda_neg == pytest.approx(1.046 / 18.54)
    assert theorem_5_4_lambda_neg(0.03, 2.94, 80) == pytest.approx(
        (1 + 0.03 * 1.94) / 77.06)
    # the balance the theorem asks for holds for any admissible kbar
    for kbar in (1.5, 2.94, 31.4):
        lam = theorem_5_4_lambda_neg(0.2, kbar, 312)
        assert 1 + 0.2 * (kbar - 1) == pytest.approx(lam * (312 - kbar))


def test_reduces_to_asl_without_clipping(batch):
    logits, target = batch
    loss = LASDLoss(lambda_pos=1., tau=1., gamma_pos=1., gamma_neg=4.,
                    lambda_neg=1.)(logits, target)
    # MMPretrain's independent ASL implementation, clip 0, summed over
    # classes and averaged over the batch
    expected = asymmetric_loss(
        logits, target, gamma_pos=1., gamma_neg=4., clip=0.,
        reduction='none').sum(1).mean()
    torch.testing.assert_close(loss, expected)


def test_reduces_to_wan(batch):
    logits, target = batch
    lam = 1 / 4
    loss = LASDLoss(lambda_pos=0.3, tau=1., gamma_pos=0., gamma_neg=0.,
                    lambda_neg=lam)(logits, target)
    # an_loss averages over B x C, LASD sums over the C = 5 classes
    expected = 5 * an_loss(logits, target, unobserved_weight=lam)
    torch.testing.assert_close(loss, expected)


def test_split_uses_detached_probabilities():
    logits = torch.tensor([[2., 3., -1.]], requires_grad=True)
    target = torch.tensor([[1., 0., 0.]])
    lasd_loss(logits, target, lambda_pos=0.5, lambda_neg=0.25,
              tau=0.9).backward()
    p = torch.sigmoid(logits.detach())[0]
    # observed positive: d(-log p)/dz = p - 1; pseudo positive (p=0.953 >
    # 0.9): 0.5 (p - 1); pseudo negative with gamma_neg = 4:
    # d(-p^4 log(1-p))/dz = p^4 [p - 4 (1-p) log(1-p)]
    expected = torch.stack([
        p[0] - 1, 0.5 * (p[1] - 1),
        0.25 * p[2]**4 * (p[2] - 4 * (1 - p[2]) * torch.log(1 - p[2]))
    ])
    torch.testing.assert_close(logits.grad[0], expected)


def test_finite_at_saturation():
    logits = torch.tensor([[100., -100., 100., -100.],
                           [-100., 100., -100., 100.]], requires_grad=True)
    target = torch.tensor([[0., 1., 1., 0.], [1., 0., 0., 0.]])
    for tau in (0.9, 1.):
        loss = LASDLoss(lambda_pos=0.1, tau=tau, lambda_neg=0.2)(logits,
                                                                 target)
        logits.grad = None
        loss.backward()
        assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # tau = 1: two wrong observed positives cost 100 nats each, three wrong
    # negatives 0.2 * 100 each (focal factor 1), right entries nothing
    assert loss.item() == pytest.approx((2 * 100 + 3 * 0.2 * 100) / 2)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        bf16 = LASDLoss(0.1, 0.9, lambda_neg=0.2)(logits.detach().bfloat16(),
                                                  target)
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16)


@pytest.mark.parametrize('kwargs,match', [
    (dict(tau=1.1), 'tau'),
    (dict(tau=-0.1), 'tau'),
    (dict(lambda_pos=-0.1), 'lambda_pos'),
    (dict(lambda_neg=-0.1, avg_positives=None, num_classes=None),
     'lambda_neg'),
    (dict(gamma_pos=-1.), 'gamma_pos'),
    (dict(gamma_neg=-1.), 'gamma_neg'),
    (dict(avg_positives=1.), 'avg_positives'),
    (dict(avg_positives=20.), 'avg_positives'),
    (dict(avg_positives=None), 'avg_positives'),
    (dict(lambda_neg=0.1), 'not both'),
])
def test_bad_input(kwargs, match):
    args = dict(lambda_pos=0.1, tau=0.9, avg_positives=1.46, num_classes=20)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        LASDLoss(**args)


def test_num_classes_must_match_logits(batch):
    logits, target = batch
    with pytest.raises(ValueError, match='num_classes=20'):
        LASDLoss(0.1, 0.9, avg_positives=1.46, num_classes=20)(logits, target)
