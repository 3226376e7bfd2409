"""Every registered SPML loss under CPU bf16 autocast (``--amp``).

Under ``AmpOptimWrapper`` the head's linear layer returns bf16 logits and
the loss runs inside the autocast region. Each loss must compute in float32
(its value equals the float32 computation on the same logits, far closer
than bf16's 3 significant digits would allow), return a float32 scalar, and
give finite gradients equal to the float32 ones up to their rounding to
bf16, also with saturated logits (|z| = 100). A loss added to
``spml_mm.models.losses`` without a case here fails
``test_every_registered_loss_has_a_case``.
"""
import inspect

import pytest
import torch
import torch.nn as nn

from spml_mm.models import losses
from spml_mm.models.label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE
from spml_mm.models.losses.unified_spml_loss import PRESETS

B, C = 8, 6


def observed():
    target = torch.zeros(B, C)
    target[torch.arange(B), torch.arange(B) % C] = 1
    return target


def bank_rows(state):
    """Bank entries of a batch: every third unobserved entry labelled."""
    pseudo = torch.zeros(B, C, dtype=torch.int8)
    pseudo.view(-1)[::3] = state
    pseudo[observed().bool()] = 0
    soft = torch.rand(B, C, generator=torch.Generator().manual_seed(3)) * 0.2
    return pseudo, soft * (pseudo != 0)


def em_case():
    pseudo, soft = bank_rows(PSEUDO_NEGATIVE)
    return losses.EMLoss(alpha=0.2, beta=0.5), dict(
        pseudo_label=pseudo, soft_label=soft)


def opml_case():
    pseudo, _ = bank_rows(PSEUDO_POSITIVE)
    loss = losses.OPMLLoss(a=0.3, b=0.6, rank_weight=0.05, soft_labels=True,
                           gamma=2.)
    return loss, dict(pseudo_label=pseudo,
                      class_ap=torch.linspace(0.1, 0.9, C))


def gr_case():
    loss = losses.GRLoss(w=(0., 10.), b=(-2., -8.), q3=1.5)
    loss.set_epoch(3, 8)
    return loss, {}


def ignore_case():
    """Past the warm-up, with bf16 logits of the masked image and the
    strong view (the classifier's other two passes under autocast)."""
    loss = losses.IGNORELoss(num_classes=C, warm_up=0, gap_lambda=0.5,
                             avg_lambda=0.5)
    loss.set_epoch(1, 2)
    g = torch.Generator().manual_seed(5)
    masked, strong = (torch.randn(2, B, C, generator=g) * 4).bfloat16()
    return loss, dict(mask_logits=masked, strong_logits=strong)


def teacher_states():
    pseudo, _ = bank_rows(PSEUDO_POSITIVE)
    pseudo.view(-1)[1::3] = PSEUDO_NEGATIVE
    pseudo[observed().bool()] = 0
    return dict(pseudo_label=pseudo)


def gpr_case():
    loss = losses.GPRLoss(w=(0., 10.), b=(-2., -8.), q3=1.5)
    loss.set_epoch(3, 8)
    return loss, teacher_states()


def ll_case(scheme):
    loss = losses.LLLoss(scheme, rate=0.05)
    loss.set_epoch(2, 10)
    if scheme != 'LL-Cp':
        return loss, {}
    pseudo, _ = bank_rows(PSEUDO_POSITIVE)
    return loss, dict(pseudo_label=pseudo, write_corrections=lambda m: None)


#: name -> builder of (loss module, extra keyword arguments of its call)
CASES = {
    'ANLoss': lambda: (losses.ANLoss(), {}),
    'ANLoss-LS': lambda: (losses.ANLoss(label_smoothing=0.1), {}),
    'ANLoss-WAN': lambda: (losses.ANLoss(unobserved_weight='wan'), {}),
    'EMLoss': lambda: (losses.EMLoss(alpha=0.1), {}),
    'EMLoss-APL': em_case,
    'GRLoss': gr_case,
    'GPRLoss': gpr_case,
    'VLPLLoss': lambda: (losses.VLPLLoss(pseudo_negative_weight=0.2),
                         teacher_states()),
    'EPRLoss': lambda: (losses.EPRLoss(expected_positives=1.5), {}),
    **{f'LLLoss-{scheme}': (lambda scheme=scheme: ll_case(scheme))
       for scheme in ('LL-R', 'LL-Ct', 'LL-Cp')},
    'ROLELoss': lambda: (losses.ROLELoss(expected_positives=1.5), dict(
        estimate_logits=torch.randn(
            B, C, generator=torch.Generator().manual_seed(5)) * 3,
        step_estimates=lambda grad: None)),
    'LASDLoss': lambda: (losses.LASDLoss(lambda_pos=0.1, tau=0.9,
                                         avg_positives=1.5,
                                         num_classes=C), {}),
    'OPMLLoss': lambda: (losses.OPMLLoss(), {}),
    'OPMLLoss-SP': opml_case,
    'ViewConsistency': lambda: (losses.ViewConsistency(alpha=0.7), {}),
    'PartialBCELoss': lambda: (losses.PartialBCELoss(), {}),
    'IGNORELoss': ignore_case,
    **{
        f'UnifiedSPMLLoss-{preset}':
        (lambda preset=preset: (losses.UnifiedSPMLLoss(preset=preset), {}))
        for preset in PRESETS
    },
    'UnifiedSPMLLoss-trainable': lambda: (losses.UnifiedSPMLLoss(
        trainable_k=True, num_classes=C), {}),
}


def logits_for(name, saturated):
    g = torch.Generator().manual_seed(0)
    shape = (3, B, C) if name == 'ViewConsistency' else (B, C)
    z = torch.randn(shape, generator=g) * 4
    if saturated:
        z.view(-1)[::2] = 100.
        z.view(-1)[1::4] = -100.
    # bf16 logits, as a linear layer returns them under autocast
    return z.bfloat16()


def run(name, z, autocast):
    loss, kwargs = CASES[name]()
    leaf = z.clone().requires_grad_()
    args = (leaf, ) if name == 'ViewConsistency' else (leaf, observed())
    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=autocast):
        out = loss(*args, **kwargs)
    out.backward()
    return out, leaf.grad


def test_every_registered_loss_has_a_case():
    registered = {
        name
        for name, obj in vars(losses).items()
        if inspect.isclass(obj) and issubclass(obj, nn.Module)
        and not inspect.isabstract(obj)  # BaseSPMLLoss
    }
    covered = {name.split('-')[0] for name in CASES}
    assert registered == covered


@pytest.mark.parametrize('saturated', [False, True],
                         ids=['moderate', 'saturated'])
@pytest.mark.parametrize('name', sorted(CASES))
def test_bf16_autocast(name, saturated):
    z = logits_for(name, saturated)
    out, grad = run(name, z, autocast=True)
    ref, ref_grad = run(name, z.float(), autocast=False)
    assert out.dtype == torch.float32 and out.dim() == 0
    assert torch.isfinite(out) and torch.isfinite(grad).all()
    assert grad.dtype == torch.bfloat16
    # float32 arithmetic: bf16 arithmetic would differ by ~1e-3 relative
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)
    # the float32 gradient rounded to bf16 (a loss that reads the logits in
    # two branches sums two rounded gradients: a bf16 ulp apart)
    torch.testing.assert_close(grad, ref_grad.bfloat16())
