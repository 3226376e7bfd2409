import os.path as osp

import pytest
import torch
from mmengine import Config
from mmpretrain.registry import MODELS

from spml_mm.models.losses import GRLoss, gr_loss
from tests.conftest import REPO
from tests.models.losses import reference

T = 8


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, generator=g) * 3
    target = torch.zeros(6, 5)
    target[torch.arange(6), torch.tensor([0, 1, 2, 3, 4, 0])] = 1
    return logits, target


def release_schedule(e, T, beta=(0, 2, -2, -2), alpha=(0.5, 2, 0.8, 0.5)):
    """The release's train.py schedule, 1-based epoch ``e``."""
    w0, wT, b0, bT = beta
    mu0, s0, muT, sT = alpha
    return (w0 + (wT - w0) * (e - 1) / T, b0 + (bT - b0) * (e - 1) / T,
            mu0 + (muT - mu0) * e / T, s0 + (sT - s0) * e / T)


@pytest.mark.parametrize('epoch', [0, 3, 7])
@pytest.mark.parametrize('q1,q3', [(None, 1.), (0.01, 1.5)])
def test_values_against_reference(batch, epoch, q1, q3):
    logits, target = batch
    beta, alpha = (0., 10., -2., -8.), (0.5, 2., 0.8, 0.5)
    loss = GRLoss(
        w=beta[:2], b=beta[2:], mu=(0.5, 0.8), sigma=(2., 0.5), q1=q1, q3=q3)
    loss.set_epoch(epoch, T)
    w, b, mu, sigma = release_schedule(epoch + 1, T, beta, alpha)
    expected = reference.gr(logits.double(), target.double(), w, b, mu,
                            sigma, q1, 0.01, q3)
    torch.testing.assert_close(
        loss(logits, target).double(), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(
        gr_loss(logits, target, w, b, mu, sigma, q1, 0.01, q3).double(),
        expected,
        rtol=1e-5,
        atol=1e-6)


def test_schedule_values_per_epoch():
    loss = GRLoss()  # VOC: beta (0, -2) -> (2, -2), alpha (0.5, 2) -> (0.8, .5)
    got = [loss.set_epoch(e, T) for e in range(T)]
    # beta uses epoch / T and stops one step short of its end
    assert [v['w'] for v in got] == pytest.approx(
        [0., .25, .5, .75, 1., 1.25, 1.5, 1.75])
    # b is constant on VOC, still logged
    assert [v['b'] for v in got] == [-2.] * T
    # alpha uses (epoch + 1) / T and reaches its end in the last epoch
    assert [v['mu'] for v in got] == pytest.approx(
        [.5375, .575, .6125, .65, .6875, .725, .7625, .8])
    assert [v['sigma'] for v in got] == pytest.approx(
        [1.8125, 1.625, 1.4375, 1.25, 1.0625, .875, .6875, .5])
    coco = GRLoss(w=(0., 10.), b=(-2., -8.))
    assert coco.set_epoch(0, T)['b'] == -2.
    assert coco.set_epoch(4, T)['b'] == pytest.approx(-5.)
    assert coco.set_epoch(7, T)['b'] == pytest.approx(-7.25)
    with pytest.raises(ValueError, match='epoch must be in'):
        loss.set_epoch(8, T)


def test_gradient_matches_eq18(batch):
    logits, target = batch
    q2, q3 = 0.01, 1.
    loss = GRLoss(q2=q2, q3=q3)
    loss.set_epoch(5, T)
    w, b, mu, sigma = release_schedule(6, T)
    z = logits.double().requires_grad_()
    loss(z, target).backward()
    # k and v held constant (they read the detached p)
    eq18 = reference.gr_gradient(logits.double(), target, w, b, mu, sigma,
                                 q2, q3)
    torch.testing.assert_close(z.grad * z.numel(), eq18, rtol=1e-5,
                               atol=1e-7)


def test_trainable_beta_learns_per_class_k(batch):
    logits, target = batch
    loss = GRLoss(trainable_beta=True, num_classes=5)
    assert loss.k_params['w'].shape == (5, )
    assert torch.equal(loss.k_params['w'].data, torch.zeros(5))
    assert torch.equal(loss.k_params['b'].data, torch.full((5, ), -2.))
    values = loss.set_epoch(2, T)  # moves alpha, leaves the learned beta
    assert values['w'] == 0. and values['b'] == -2.
    with torch.no_grad():
        loss.k_params['w'].copy_(torch.linspace(-1, 1, 5))
    z = logits.clone().requires_grad_()
    loss(z, target).backward()
    # autograd of the formula in the per-class w and b
    w = torch.linspace(-1, 1, 5, dtype=torch.float64).requires_grad_()
    b = torch.full((5, ), -2., dtype=torch.float64, requires_grad=True)
    _, _, mu, sigma = release_schedule(3, T)
    reference.gr(logits.double(), target.double(), w, b, mu,
                 sigma).backward()
    torch.testing.assert_close(
        loss.k_params['w'].grad.double(), w.grad, rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(
        loss.k_params['b'].grad.double(), b.grad, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize('dtype', [None, torch.bfloat16, torch.float16])
def test_finite_at_saturation(dtype):
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]])
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    for q1, q3 in [(None, 1.), (0.01, 1.5)]:
        loss = GRLoss(w=(0., 10.), b=(-2., -8.), q1=q1, q3=q3)
        loss.set_epoch(7, T)
        z = logits.clone().requires_grad_()
        if dtype is None:
            out = loss(z, target)
        else:
            with torch.autocast('cpu', dtype=dtype):
                out = loss(z.to(dtype), target)
        out.backward()
        assert out.dtype == torch.float32
        assert torch.isfinite(out) and torch.isfinite(z.grad).all()
        assert out > 0


def test_bad_input(batch):
    logits, target = batch
    for kwargs, match in [
        (dict(q2=0.), r'^q2 must be > 0 \(at every point'),
        (dict(q3=-1.), '^q3 must be > 0'),
        (dict(q1=0.), '^q1 must be > 0'),
        (dict(sigma=(2., 0.)), '^sigma must be > 0'),
        (dict(sigma=-1.), '^sigma must be > 0'),
        (dict(mu=(0.5, 0.6, 0.8)), '^mu must be a number or a'),
        (dict(trainable_beta=True), 'needs num_classes'),
    ]:
        with pytest.raises(ValueError, match=match):
            GRLoss(**kwargs)


@pytest.mark.parametrize('dataset,bs,lr,epochs,w,b,q3', [
    ('voc', 8, 1e-5, 8, (0., 2.), (-2., -2.), 1.),
    ('coco', 16, 1e-5, 8, (0., 10.), (-2., -8.), 1.),
    ('nuswide', 16, 1e-5, 10, (0., 10.), (-2., -8.), 1.),
    ('cub', 8, 5e-5, 10, (0., 10.), (-2., -8.), 1.5),
])
def test_paper_configs_follow_table_6(dataset, bs, lr, epochs, w, b, q3):
    cfg = Config.fromfile(
        osp.join(REPO, f'configs/grloss/resnet50_{dataset}.py'))
    assert cfg.train_dataloader.batch_size == bs
    assert cfg.optim_wrapper.optimizer.lr == lr
    assert cfg.optim_wrapper.paramwise_cfg.custom_keys.head.lr_mult == 10.
    assert cfg.train_cfg.max_epochs == epochs
    assert cfg.default_hooks.epoch_schedule == dict(type='SPMLEpochHook')
    loss = MODELS.build(cfg.model.head.loss)
    assert isinstance(loss, GRLoss)
    assert loss.k_args == dict(w=w, b=b)
    assert loss.v_args == dict(mu=(0.5, 0.8), sigma=(2., 0.5))
    assert loss.terms['l2'].keywords == dict(q=0.01)
    assert loss.terms['l3'].keywords == dict(q=q3)
