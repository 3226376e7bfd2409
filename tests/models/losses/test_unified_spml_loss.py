import importlib
from functools import partial

import pytest
import torch
import torch.nn.functional as F

from spml_mm.models.losses import GRLoss, UnifiedSPMLLoss, an_loss
from spml_mm.models.losses.unified_spml_loss import (PRESETS,
                                                     unified_spml_loss)
from tests.models.losses import reference


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(8, 6, generator=g) * 3
    target = torch.zeros(8, 6)
    target[torch.arange(8), torch.tensor([0, 1, 2, 3, 4, 5, 0, 2])] = 1
    return logits, target


def standalone(name, z, target):
    """Each Table-1 method's loss from reference.py, in float64."""
    z, s = z.double(), target.double()
    if name == 'em':  # alpha 0.1
        return reference.em(z, s, 0.1)
    return getattr(reference, name)(z, s)


@pytest.mark.parametrize('preset', ['an', 'en', 'em', 'hill', 'splc'])
def test_presets_equal_their_formulas(batch, preset):
    logits, target = batch
    loss = UnifiedSPMLLoss(preset=preset)
    torch.testing.assert_close(
        loss(logits, target).double(),
        standalone(preset, logits, target),
        rtol=1e-5,
        atol=1e-6)
    # same gradients as the standalone formula (k and v read detached p)
    z = logits.clone().requires_grad_()
    loss(z, target).backward()
    z64 = logits.double().requires_grad_()
    standalone(preset, z64, target).backward()
    torch.testing.assert_close(z.grad.double(), z64.grad, rtol=1e-4,
                               atol=1e-7)


def test_an_preset_is_bce(batch):
    logits, target = batch
    expected = F.binary_cross_entropy_with_logits(logits, target)
    torch.testing.assert_close(
        UnifiedSPMLLoss(preset='an')(logits, target), expected)
    torch.testing.assert_close(an_loss(logits, target), expected)


def test_gr_preset_is_grloss(batch):
    logits, target = batch
    preset, gr = UnifiedSPMLLoss(preset='gr'), GRLoss()
    for epoch in (0, 4):
        assert preset.set_epoch(epoch, 6) == gr.set_epoch(epoch, 6)
        torch.testing.assert_close(preset(logits, target), gr(logits, target))


@pytest.mark.parametrize('l1', [dict(type='log'), dict(type='gce', q=0.3)])
def test_gr_components_run_gr_value_and_grad(batch, l1, monkeypatch):
    """The gr preset, with any arguments, is computed by GR's own function,
    and equals the framework's generic form (autograd of its components)."""
    # the module, not the class the package exports under its name
    unified = importlib.import_module(
        'spml_mm.models.losses.unified_spml_loss')
    logits, target = batch
    loss = UnifiedSPMLLoss(
        preset='gr', l1=l1, l2=dict(type='gce', q=0.2),
        l3=dict(type='gce_neg', q=1.5))
    loss.set_epoch(2, 6)
    z = logits.clone().requires_grad_()
    value = loss(z, target)
    value.backward()
    parts = dict(k=partial(loss.k_func, **loss._k_now),
                 v=partial(loss.v_func, **loss._v_now), **loss.terms)
    z_ref = logits.clone().requires_grad_()  # the framework computes in fp32
    expected = unified_spml_loss(z_ref, target, **parts)
    expected.backward()
    torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(z.grad, z_ref.grad, rtol=1e-4, atol=1e-8)
    calls = []
    monkeypatch.setattr(unified, 'gr_loss',
                        lambda *args: calls.append(args[6:]) or value)
    loss(logits, target)
    # q1, q2, q3 and no observed negatives
    assert calls == [(0.3 if l1['type'] == 'gce' else None, 0.2, 1.5, None)]
    # another component is the generic form
    calls.clear()
    UnifiedSPMLLoss(preset='gr', l3=dict(type='hill'))(logits, target)
    assert calls == []


def test_components_override_the_preset(batch):
    logits, target = batch
    # Hill with lambda 2 and every unobserved term weighted 0.5
    loss = UnifiedSPMLLoss(
        preset='hill',
        v=dict(type='constant', weight=0.5),
        l3=dict(type='hill', lam=2.))
    p = torch.sigmoid(logits.double())
    expected = torch.where(target > 0, -p.log(), 0.5 * (2 - p) * p**2)
    torch.testing.assert_close(
        loss(logits, target).double(), expected.mean(), rtol=1e-5, atol=1e-6)
    # a scheduled threshold moves with v's (epoch + 1) / T
    en = UnifiedSPMLLoss(
        preset='en', v=dict(type='threshold', tau=(0.9, 0.5)))
    assert en.set_epoch(1, 4) == dict(value=0., tau=pytest.approx(0.7))
    # k's and v's arguments of the same name are logged apart
    both = UnifiedSPMLLoss(
        preset='splc', v=dict(type='threshold', tau=(0.9, 0.5)))
    assert both.set_epoch(3, 4) == dict(tau=0.6, v_tau=pytest.approx(0.5))


@pytest.mark.parametrize('dtype', [None, torch.bfloat16, torch.float16])
@pytest.mark.parametrize('preset', sorted(PRESETS))
def test_presets_finite_at_saturation(preset, dtype):
    logits = torch.tensor([[100., -100., 100.], [-100., 100., -100.]])
    target = torch.tensor([[0., 1., 0.], [1., 0., 0.]])
    z = logits.clone().requires_grad_()
    loss = UnifiedSPMLLoss(preset=preset)
    if dtype is None:
        out = loss(z, target)
    else:
        with torch.autocast('cpu', dtype=dtype):
            out = loss(z.to(dtype), target)
    out.backward()
    assert out.dtype == torch.float32
    assert torch.isfinite(out) and torch.isfinite(z.grad).all()


def test_bad_components():
    for kwargs, match in [
        (dict(preset='xyz'), 'preset must be one of'),
        (dict(k=dict(type='sigmoid')), r'k.type must be one of'),
        (dict(v=dict(type='gaussian', mu=0.5)), "missing a required"),
        (dict(l3=dict(type='gce_neg', q=1., r=2.)), 'unexpected keyword'),
        (dict(l2=dict(type='gce', q=0.)), r'l2.q must be > 0'),
        (dict(v=dict(type='gaussian', mu=0.5, sigma=(1., -1.))),
         r'v.sigma must be > 0'),
        (dict(k=dict(type='threshold', tau=1.5)), r'k.tau must be in \[0'),
        (dict(l3=dict(type='gce_neg', q=(1., 2.))), 'fixed arguments'),
        (dict(k=dict(type='logistic', w=(0., 1., 2.), b=0.)),
         r'k.w must be a number or a \(start, end\) pair'),
        (dict(k=dict(type='constant', value='0')), r'k.value must be a'),
        (dict(preset='hill', trainable_k=True, num_classes=3),
         "needs k=dict\\(type='logistic'"),
    ]:
        with pytest.raises(ValueError, match=match):
            UnifiedSPMLLoss(**kwargs)
