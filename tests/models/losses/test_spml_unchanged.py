"""Single-positive training is unchanged by the partial-label path.

The functions below are the losses, the head's target and the modules'
label handling as they were at commit 90d9002 (before observed negatives),
copied without their docstrings. On single-positive 0/1 targets every
current function must give bit-identical values and gradients, so the SPML
configs train to the same numbers.
"""
import math
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401  (registers the plugin)
from spml_mm.models.label_banks.label_bank import PSEUDO_POSITIVE
from spml_mm.models.losses import (LLLoss, OPMLLoss, an_loss, em_loss,
                                   epr_loss, gr_loss, lasd_loss, ll_loss,
                                   role_loss)
from spml_mm.models.losses.an_loss import an_value_and_grad
from spml_mm.models.losses.em_loss import em_value_and_grad
from spml_mm.models.losses.epr_loss import (epr_value_and_grad,
                                            expected_positives_penalty)
from spml_mm.models.losses.gr import gr_value_and_grad
from spml_mm.models.losses.large_loss import (large_loss_selection,
                                              ll_value_and_grad)
from spml_mm.models.losses.lasd_loss import lasd_value_and_grad
from spml_mm.models.losses.opml_loss import opml_loss
from spml_mm.models.losses.role_loss import role_value_and_grad
from spml_mm.models.losses.unified_spml_loss import (PRESETS,
                                                     UnifiedSPMLLoss,
                                                     unified_spml_loss)

# --- commit 90d9002 ---------------------------------------------------------


def main_an(z, s, label_smoothing=0., unobserved_weight=1.):
    t = s.to(z.dtype)
    if label_smoothing:
        t = t * (1 - 2 * label_smoothing) + label_smoothing
    w = None if unobserved_weight == 1 else torch.where(
        s > 0, 1., unobserved_weight).to(z.dtype)
    value = F.binary_cross_entropy_with_logits(z, t, w)
    grad = torch.sigmoid(z).sub_(t).div_(z.numel())
    return value, grad if w is None else grad.mul_(w)


def main_em(z, s, alpha=0.1, beta=0.2, pseudo_negative=None,
            soft_label=None):
    positive = s > 0
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    qz = (1 - p) * z
    value = torch.where(positive, -log_p, alpha * (log_p - qz))
    grad = torch.where(positive, p - 1, alpha * p * qz)
    if pseudo_negative is not None:
        negative = pseudo_negative & ~positive
        t = soft_label.to(z.dtype)
        value = torch.where(negative, beta * ((1 - t) * z - log_p), value)
        grad = torch.where(negative, beta * (p - t), grad)
    return value.mean(), grad / z.numel()


def main_gr(z, s, w, b, mu, sigma, q1=None, q2=0.01, q3=1.):
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    q = 1 - p
    k = torch.sigmoid(w * p + b)
    v = torch.exp((p - mu).square_().mul_(-0.5 / sigma**2))
    p_q2 = torch.exp(q2 * log_p)
    q_q3 = q if q3 == 1 else torch.exp(q3 * (log_p - z))
    unobserved = v * (k * (1 - p_q2) / q2 + (1 - k) * (1 - q_q3) / q3)
    d_unobserved = v * ((1 - k) * q_q3 * p - k * p_q2 * q)
    if q1 is None:
        positive, d_positive = -log_p, -q
    else:
        p_q1 = torch.exp(q1 * log_p)
        positive, d_positive = (1 - p_q1) / q1, -p_q1 * q
    observed = s > 0
    value = torch.where(observed, positive, unobserved).mean()
    grad = torch.where(observed, d_positive, d_unobserved) / z.numel()
    return value, grad


def main_lasd(z, s, lambda_pos, lambda_neg, tau, gamma_pos=0., gamma_neg=4.):
    p, log_p = torch.sigmoid(z), F.logsigmoid(z)
    q, log_q = 1 - p, log_p - z
    observed = s.bool()
    positive = observed | (p > tau)
    one, w_pos, w_neg = z.new_tensor([1., lambda_pos, lambda_neg]) / z.size(0)
    weight = torch.where(observed, one, torch.where(positive, w_pos, w_neg))
    if gamma_pos:
        focus_pos = torch.exp(gamma_pos * log_q)
        loss_pos = focus_pos * log_p
        grad_pos = focus_pos * torch.addcmul(-q, p, log_p, value=gamma_pos)
    else:
        loss_pos, grad_pos = log_p, -q
    if gamma_neg:
        focus_neg = torch.exp(gamma_neg * log_p)
        loss_neg = focus_neg * log_q
        grad_neg = focus_neg * torch.addcmul(p, q, log_q, value=-gamma_neg)
    else:
        loss_neg, grad_neg = log_q, p
    term = torch.where(positive, loss_pos, loss_neg)
    value = -weight.view(-1).dot(term.view(-1))
    grad = torch.where(positive, grad_pos, grad_neg).mul_(weight)
    return value, grad


def main_selection(z, s, k):
    unobserved = s <= 0
    if k <= 0:
        return torch.zeros_like(unobserved)
    candidates = z.detach().masked_fill(~unobserved, -math.inf).flatten()
    k = min(k, candidates.numel())
    threshold = candidates.kthvalue(candidates.numel() - k + 1).values
    return unobserved & (z >= threshold)


def main_ll(z, s, selected, correct):
    positive = (s > 0) | selected if correct else s > 0
    p = torch.sigmoid(z)
    value = torch.where(positive, F.softplus(-z), F.softplus(z))
    grad = torch.where(positive, p - 1, p)
    if not correct:
        value = value.masked_fill(selected, 0.)
        grad = grad.masked_fill(selected, 0.)
    return value.mean(), grad.div_(z.numel())


def main_epr(z, s, expected_positives):
    positive = s > 0
    p = torch.sigmoid(z)
    value = torch.where(positive, -F.logsigmoid(z), 0.).mean()
    grad = torch.where(positive, p - 1, 0.).div_(z.numel())
    penalty, d_penalty = expected_positives_penalty(p, expected_positives)
    return value + penalty, grad.add_(d_penalty)


def main_role(z, s, u, expected_positives):
    positive = s > 0
    u = u.to(z.dtype)
    p, q = torch.sigmoid(z), torch.sigmoid(u)
    observed = torch.where(positive, F.softplus(-z) + F.softplus(-u), 0.)
    cross = F.softplus(z) - q * z + F.softplus(u) - p * u
    penalty_p, d_penalty = expected_positives_penalty(p, expected_positives)
    penalty_q, _ = expected_positives_penalty(q, expected_positives)
    value = 0.5 * ((observed + cross).mean() + penalty_p + penalty_q)
    grad = (torch.where(positive, p - 1, 0.) + p - q).div_(2 * z.numel())
    return value, grad.add_(d_penalty, alpha=0.5)


def main_unified(cls_score, target, k, v, l1, l2=None, l3=None):
    z = cls_score.float()
    p = torch.sigmoid(z).detach()
    k_p = k(p)
    unobserved = torch.zeros_like(z)
    if l2 is not None:
        unobserved = unobserved + k_p * l2(z)
    if l3 is not None:
        unobserved = unobserved + (1 - k_p) * l3(z)
    return torch.where(target > 0, l1(z), v(p) * unobserved).mean()


def main_target(data_samples, num_classes):
    """SPMLLinearClsHead.observed_target without its checks."""
    target = torch.zeros(len(data_samples), num_classes)
    for row, sample in zip(target, data_samples):
        row[sample.gt_label.cpu()] = 1
    return target


def main_ll_cp_target(target, pseudo_label):
    """LLLoss.forward's LL-Cp target, as passed to its selection and loss."""
    return target.bool() | (pseudo_label == PSEUDO_POSITIVE)


def main_opml_label(target, pseudo_label, soft):
    """OPMLLoss.forward's labels, with the soft labels already computed."""
    label = target.float()
    label = label.maximum((pseudo_label == PSEUDO_POSITIVE).float())
    return torch.where(label > 0, label, soft)


# --- the comparison ---------------------------------------------------------


def single_positive_batch(seed):
    """Float32 logits (16, 7), some saturated, and one observed positive
    per row; the last row observes none."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(16, 7, generator=g) * 4
    z.view(-1)[::11] = 100.
    z.view(-1)[5::13] = -100.
    s = torch.zeros(16, 7)
    s[torch.arange(15), torch.randint(7, (15, ), generator=g)] = 1
    return z, s


def bank_mask(s, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(s.shape, generator=g) < 0.4


FUNCTIONS = {
    'AN': (an_value_and_grad, main_an, lambda s: ()),
    'AN-LS': (an_value_and_grad, main_an, lambda s: (0.1, 1.)),
    'WAN': (an_value_and_grad, main_an, lambda s: (0., 1 / 6)),
    'EM': (em_value_and_grad, main_em, lambda s: (0.2, 0.02)),
    'EM + APL': (em_value_and_grad, main_em,
                 lambda s: (0.1, 0.9, bank_mask(s, 1),
                            torch.rand(s.shape) * 0.3)),
    'GR': (gr_value_and_grad, main_gr,
           lambda s: (2., -2., 0.65, 1.25)),
    'GR q1 q3': (gr_value_and_grad, main_gr,
                 lambda s: (torch.linspace(0., 10., 7), -8., 0.8, 0.5,
                            0.01, 0.01, 1.5)),
    'LASD': (lasd_value_and_grad, main_lasd,
             lambda s: (0.1, 0.0564, 0.9)),
    'LASD gammas': (lasd_value_and_grad, main_lasd,
                    lambda s: (0.03, 0.02, 0.5, 1., 2.)),
    'LL-R': (ll_value_and_grad, main_ll,
             lambda s: (bank_mask(s, 2) & (s == 0), False)),
    'LL-Ct': (ll_value_and_grad, main_ll,
              lambda s: (bank_mask(s, 3) & (s == 0), True)),
    'EPR': (epr_value_and_grad, main_epr, lambda s: (2.06, )),
    'ROLE': (role_value_and_grad, main_role,
             lambda s: (torch.randn(s.shape) * 3, 2.06)),
}


def identical(a, b):
    return a.dtype == b.dtype and torch.equal(a, b)


@pytest.mark.parametrize('seed', [0, 1, 2])
@pytest.mark.parametrize('name', FUNCTIONS)
def test_value_and_gradient_are_bit_identical(name, seed):
    current, main, args = FUNCTIONS[name]
    z, s = single_positive_batch(seed)
    torch.manual_seed(seed)
    hyper = args(s)
    value, grad = current(z.clone(), s, *hyper)
    main_value, main_grad = main(z.clone(), s, *hyper)
    assert identical(value, main_value)
    assert identical(grad, main_grad)


LOSS_OPS = {
    'AN': (an_loss, main_an, (0.1, 0.25)),
    'EM': (em_loss, main_em, (0.2, 0.02)),
    'GR': (gr_loss, main_gr, (2., -2., 0.65, 1.25)),
    'LASD': (lasd_loss, main_lasd, (0.1, 0.0564, 0.9)),
    'EPR': (epr_loss, main_epr, (2.06, )),
}


@pytest.mark.parametrize('name', LOSS_OPS)
def test_the_autograd_op_backpropagates_the_same_gradient(name):
    op, main, hyper = LOSS_OPS[name]
    z, s = single_positive_batch(4)
    leaf = z.clone().requires_grad_()
    out = op(leaf, s, *hyper)
    (2 * out).backward()
    value, grad = main(z.clone(), s, *hyper)
    assert identical(out.detach(), value)
    assert identical(leaf.grad, 2 * grad)


def test_ll_selection_and_role_op_are_unchanged():
    z, s = single_positive_batch(5)
    for k in (0, 1, 7, 40, 200):
        assert torch.equal(large_loss_selection(z, s, k),
                           main_selection(z, s, k))
    selected = main_selection(z, s, 9)
    for correct in (False, True):
        leaf = z.clone().requires_grad_()
        ll_loss(leaf, s, selected, correct).backward()
        _, grad = main_ll(z, s, selected, correct)
        assert identical(leaf.grad, grad)
    u = torch.randn(z.shape, generator=torch.Generator().manual_seed(6))
    leaf = z.clone().requires_grad_()
    out = role_loss(leaf, s, u, 2.06)
    out.backward()
    value, grad = main_role(z, s, u, 2.06)
    assert identical(out.detach(), value) and identical(leaf.grad, grad)


@pytest.mark.parametrize('preset', sorted(PRESETS))
def test_unified_framework_is_unchanged(preset):
    """The autograd form of every Table-1 preset, value and gradient."""
    z, s = single_positive_batch(7)
    loss = UnifiedSPMLLoss(preset=preset)
    k = partial(loss.k_func, **loss._k_now)
    v = partial(loss.v_func, **loss._v_now)
    results = []
    for function in (unified_spml_loss, main_unified):
        leaf = z.clone().requires_grad_()
        out = function(leaf, s, k=k, v=v, **loss.terms)
        out.backward()
        results.append((out.detach(), leaf.grad))
    assert identical(results[0][0], results[1][0])
    assert identical(results[0][1], results[1][1])


def test_head_target_is_the_previous_matrix():
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=7, in_channels=3))
    samples = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label(labels)
        for i, labels in enumerate([[0], [6], [2, 3], [1]])
    ]
    assert identical(head.observed_target(samples),
                     main_target(samples, 7))
    # an empty gt_label_neg (packed, single positive) changes nothing
    for sample in samples:
        sample.set_field(torch.zeros(0, dtype=torch.long), 'gt_label_neg')
    assert identical(head.observed_target(samples),
                     main_target(samples, 7))


def test_ll_cp_and_opml_modules_read_the_bank_as_before():
    z, s = single_positive_batch(8)
    pseudo = torch.where(bank_mask(s, 9) & (s == 0), PSEUDO_POSITIVE,
                         0).to(torch.int8)
    # LL-Cp: the loss and the corrections it writes
    loss = LLLoss('LL-Cp', rate=0.05)
    loss.set_epoch(1, 6)
    written = []
    leaf = z.clone().requires_grad_()
    out = loss(leaf, s, pseudo_label=pseudo,
               write_corrections=written.append)
    out.backward()
    target = main_ll_cp_target(s, pseudo)
    selected = main_selection(z, target, loss.num_modified(*z.shape))
    value, grad = main_ll(z, target.to(z.dtype), selected, True)
    assert identical(out.detach(), value) and identical(leaf.grad, grad)
    assert len(written) == 1 and torch.equal(written[0], selected)
    # OPML-SP: corrected positives and soft labels
    loss = OPMLLoss(a=0.3, b=0.6, rank_weight=0.05, soft_labels=True,
                    gamma=2.)
    class_ap = torch.linspace(-1., 0.9, 7)
    leaf = z.clone().requires_grad_()
    out = loss(leaf, s, pseudo_label=pseudo, class_ap=class_ap)
    out.backward()
    weight = torch.where(class_ap < 0, torch.zeros_like(class_ap),
                         class_ap.clamp(max=1).pow(2.))
    label = main_opml_label(s, pseudo, torch.sigmoid(z) * weight)
    ref = z.clone().requires_grad_()
    expected = opml_loss(ref, label, loss.alpha, loss.beta, 0.05, 1e-2)
    expected.backward()
    assert identical(out.detach(), expected.detach())
    assert identical(leaf.grad, ref.grad)
