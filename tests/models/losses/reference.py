"""Each method's loss as the method pages (docs/methods/) write it, for the tests.

Plain float64 formulas, entry by entry in the documentation's symbols, with
no fused or rearranged form: a test takes a reference value from these
functions and a reference gradient from autograd of them. Common arguments:

- ``z``: logits (B, C), float64; ``p = sigmoid(z)``, and ``1 - p`` is
  computed as ``sigmoid(-z)``, the same number without the cancellation that
  makes ``log(1 - p)`` infinite at a large logit, so every reference stays
  finite for |z| up to about 700;
- ``s``: observed labels (B, C): 1 an observed positive, 0 unobserved, -1 an
  observed negative (docs/methods/partial_labels.md, Partial labels, gives each loss's
  term for it).

The pseudo-labelling parts (GR's k and v, LASD's and the Table-1 presets'
thresholds, OPML's soft labels) read the detached p, as the methods define
them.
"""
import torch

log, exp, sigmoid = torch.log, torch.exp, torch.sigmoid


def probabilities(z):
    """``p`` and ``1 - p``."""
    return sigmoid(z), sigmoid(-z)


def bce(p, p_neg, t):
    """Binary cross-entropy of ``p`` (``1 - p = p_neg``) towards ``t``."""
    return -(t * log(p) + (1 - t) * log(p_neg))


def by_label(s, positive, negative, unobserved):
    """Each entry's term chosen by its observed label (numbers in float64).
    """
    positive, negative, unobserved = (
        torch.as_tensor(term, dtype=torch.float64)
        for term in (positive, negative, unobserved))
    return torch.where(s > 0, positive,
                       torch.where(s < 0, negative, unobserved))


def an(z, s, epsilon=0., lam=1.):
    """AN, AN-LS and WAN: mean over B x C of BCE(p, t), t = 1 - epsilon on
    observed positives and epsilon elsewhere, the unobserved terms weighted
    lambda; an observed negative has weight 1."""
    p, p_neg = probabilities(z)
    t = (s > 0).double() * (1 - 2 * epsilon) + epsilon
    weight = by_label(s, 1., 1., lam)
    return (weight * bce(p, p_neg, t)).mean()


def em(z, s, alpha, beta=0., pseudo_negative=None, t=None):
    """EM: -log p on the observed positive, -alpha H(p) on an unobserved
    label; with APL, beta BCE(p, t) on an unobserved label the bank holds
    as a negative with soft target t; -log(1 - p) on an observed negative.
    """
    p, p_neg = probabilities(z)
    entropy = -(p * log(p) + p_neg * log(p_neg))
    unobserved = -alpha * entropy
    if pseudo_negative is not None:
        unobserved = torch.where(pseudo_negative, beta * bce(p, p_neg, t),
                                 unobserved)
    return by_label(s, -log(p), -log(p_neg), unobserved).mean()


def gr_k(p, w, b):
    """GR's soft pseudo-label k(p) = sigmoid(w p + b)."""
    return sigmoid(w * p + b)


def gr_v(p, mu, sigma):
    """GR's weight v(p) = exp(-(p - mu)^2 / (2 sigma^2))."""
    return exp(-(p - mu)**2 / (2 * sigma**2))


def gr(z, s, w, b, mu, sigma, q1=None, q2=0.01, q3=1.):
    """GR (Eq. 9): s L1(p) + (1 - s) v(p) [k(p) L2(p) + (1 - k(p)) L3(p)],
    mean over B x C; L1(1 - p) on an observed negative. ``w`` may be a
    per-class tensor, also one that requires grad (trainable beta)."""
    p, p_neg = probabilities(z)
    k, v = gr_k(p.detach(), w, b), gr_v(p.detach(), mu, sigma)

    def l1(x):
        return -log(x) if q1 is None else (1 - x**q1) / q1

    l2 = (1 - p**q2) / q2
    l3 = (1 - p_neg**q3) / q3
    return by_label(s, l1(p), l1(p_neg),
                    v * (k * l2 + (1 - k) * l3)).mean()


def gr_gradient(z, s, w, b, mu, sigma, q2=0.01, q3=1.):
    """GR's dL/dz per entry, before the mean over B x C (L1 = -log p):
    p - 1 on the observed positive; Eq. 18 on an unobserved label,
    v [(1 - k)(1 - p)^q3 p - k p^q2 (1 - p)]."""
    p, p_neg = probabilities(z)
    k, v = gr_k(p, w, b), gr_v(p, mu, sigma)
    unobserved = v * ((1 - k) * p_neg**q3 * p - k * p**q2 * p_neg)
    return torch.where(s > 0, p - 1, unobserved)


def lasd(z, s, lambda_pos, lambda_neg, tau, gamma_pos=0., gamma_neg=4.):
    """LASD: s Lp + (1 - s) ([p > tau] lambda_pos Lp + [p <= tau]
    lambda_neg Ln), summed over classes, mean over the batch, with
    Lp = -(1 - p)^gamma_pos log p and Ln = -p^gamma_neg log(1 - p); an
    observed negative costs Ln with weight 1."""
    p, p_neg = probabilities(z)
    lp = -p_neg**gamma_pos * log(p)
    ln = -p**gamma_neg * log(p_neg)
    unobserved = torch.where(p.detach() > tau, lambda_pos * lp,
                             lambda_neg * ln)
    return by_label(s, lp, ln, unobserved).sum(1).mean()


def large_losses(z, s, k):
    """M of LL-R, LL-Ct and LL-Cp: the unobserved entries whose AN loss
    -log(1 - p) is at least the k-th largest unobserved one (all of them if
    there are fewer than k)."""
    loss = torch.log1p(exp(z))  # -log(1 - p), distinct for every z
    unobserved = s == 0
    if k <= 0:
        return torch.zeros_like(unobserved)
    largest = loss[unobserved].sort(descending=True).values
    return unobserved & (loss >= largest[min(k, len(largest)) - 1])


def ll(z, s, selected, correct):
    """LL: mean over B x C of -log p on observed positives (and on M when
    ``correct``, LL-Ct and LL-Cp), 0 on M when rejecting (LL-R) and
    -log(1 - p) on every other entry."""
    p, p_neg = probabilities(z)
    positive = (s > 0) | (selected & correct)
    loss = torch.where(positive, -log(p), -log(p_neg))
    if not correct:
        loss = torch.where(selected, 0., loss)
    return loss.mean()


def expected_positives_penalty(p, k):
    """EPR's regulariser R(p) = (mean_n sum_i p_ni - k)^2 / C^2."""
    return (p.sum(1).mean() - k)**2 / p.size(1)**2


def epr(z, s, k):
    """EPR: -log p over the observed positives (-log(1 - p) over observed
    negatives) divided by B C, plus R(p)."""
    p, p_neg = probabilities(z)
    observed = by_label(s, -log(p), -log(p_neg), 0.)
    return observed.mean() + expected_positives_penalty(p, k)


def role(z, s, u, k):
    """ROLE, with the label estimates' logits ``u`` (q = sigmoid(u)):
    [s (-log p - log q) + BCE(p, sg q) + BCE(q, sg p)] / 2 over B x C plus
    (R(p) + R(q)) / 2; -log(1 - p) - log(1 - q) on an observed negative.
    Autograd in ``z`` gives dL/dz, in ``u`` dL/du."""
    p, p_neg = probabilities(z)
    q, q_neg = probabilities(u)
    observed = by_label(s, -log(p) - log(q), -log(p_neg) - log(q_neg), 0.)
    cross = bce(p, p_neg, q.detach()) + bce(q, q_neg, p.detach())
    penalty = (expected_positives_penalty(p, k) +
               expected_positives_penalty(q, k))
    return ((observed + cross) / 2).mean() + penalty / 2


def opml(z, y, alpha, beta, rank_weight=0., rank_delta=0.01):
    """OPML: mean over the batch of log(alpha + sum_j (1 - y_j) e^{z_j}) +
    log(beta + sum_j y_j e^{-z_j}), minus lambda sum_i log(sigma_i(F)^2 +
    delta) over the singular values of F = sigmoid(z)."""
    loss = (log(alpha + ((1 - y) * exp(z)).sum(1)) +
            log(beta + (y * exp(-z)).sum(1))).mean()
    if rank_weight:
        sv = torch.linalg.svdvals(sigmoid(z))
        loss = loss - rank_weight * log(sv**2 + rank_delta).sum()
    return loss


def opml_labels(p, s, corrected, class_ap=None, gamma=1.):
    """OPML's y from the detached ``p``: 1 on observed positives and on
    corrected unobserved entries, 0 on observed negatives and, with soft
    labels (``class_ap``; -1 for a class not measured yet), p AP^gamma on
    the other entries."""
    if class_ap is None:
        soft = torch.zeros_like(p)
    else:
        soft = p * torch.where(class_ap < 0, 0., class_ap**gamma)
    unobserved = torch.where(corrected, 1., soft)
    return by_label(s, 1., 0., unobserved)


def partial_bce(z, s, alpha, gamma):
    """Partial-BCE: mean_n g(p_y) / C sum over known labels of BCE, with
    p_y the share of known labels and g(p_y) = alpha p_y^gamma + 1 - alpha.
    """
    p, p_neg = probabilities(z)
    known = (s != 0).double()
    p_y = known.mean(1, keepdim=True)
    g = alpha * p_y**gamma + 1 - alpha
    terms = by_label(s, -log(p), -log(p_neg), 0.)
    return (g * terms).sum(1).mean() / z.size(1)


def consistency(views):
    """LASD's view consistency: sum over view pairs i < j of
    ||sigmoid(z_i) - sigmoid(z_j)||^2, mean over the samples."""
    p = sigmoid(views)
    return sum(((p[i] - p[j])**2).sum(-1) for i in range(len(p))
               for j in range(i + 1, len(p))).mean()


# --- the presets of GR's Table 1 besides AN, EM and GR ---------------------


def hill(z, s, lam=1.5):
    """Hill (Zhang et al. 2021): -log p on the positive, (lambda - p) p^2 on
    an unobserved label; L1(-z) = -log(1 - p) on an observed negative."""
    p, p_neg = probabilities(z)
    return by_label(s, -log(p), -log(p_neg), (lam - p) * p**2).mean()


def en(z, s, tau=0.5):
    """EN (Verelst et al. 2023): -log(1 - p) on an unobserved label with
    p <= tau, the confident ones ignored; -log(1 - p) on an observed
    negative."""
    p, p_neg = probabilities(z)
    unobserved = torch.where(p.detach() <= tau, -log(p_neg), 0.)
    return by_label(s, -log(p), -log(p_neg), unobserved).mean()


def focal_margin(z, margin=1., gamma=2.):
    """-(1 - p_m)^gamma log p_m with p_m = sigmoid(z - margin)."""
    return -sigmoid(margin - z)**gamma * log(sigmoid(z - margin))


def splc(z, s, tau=0.6, lam=1.5):
    """Focal margin + SPLC (Zhang et al. 2021): the focal margin loss on
    the positive and on unobserved labels with p > tau, Hill below;
    the focal margin loss of -z on an observed negative."""
    p = sigmoid(z)
    unobserved = torch.where(p.detach() > tau, focal_margin(z),
                             (lam - p) * p**2)
    return by_label(s, focal_margin(z), focal_margin(-z), unobserved).mean()


def vlpl(z, s, positive, negative, alpha, beta_pos, beta_neg=0., rho=0.9):
    """VLPL: EM (-log p on the observed positive, -alpha H(p) on an
    unobserved label) with beta_pos BCE(p, rho) on a positive and beta_neg
    BCE(p, 1 - rho) on a negative pseudo-label; -log(1 - p) on an observed
    negative."""
    p, p_neg = probabilities(z)
    entropy = -(p * log(p) + p_neg * log(p_neg))
    unobserved = torch.where(
        positive, beta_pos * bce(p, p_neg, rho),
        torch.where(negative, beta_neg * bce(p, p_neg, 1 - rho),
                    -alpha * entropy))
    return by_label(s, -log(p), -log(p_neg), unobserved).mean()


def gpr(z, s, positive, negative, w, b, mu, sigma, q2, q3, lam2, lam1, rho,
        reg, k):
    """AEVLP's GPR: GR (L1 = -log p) on observed labels and unobserved
    labels without a pseudo-label; u BCE(p, rho), u = clip(1 - v(p),
    lambda_2, lambda_1), on a positive and v(p) (-log(1 - p)) on a negative
    pseudo-label; mean over B x C, plus reg R(p) (EPR's regulariser)."""
    p, p_neg = probabilities(z)
    kp, v = gr_k(p.detach(), w, b), gr_v(p.detach(), mu, sigma)
    gr_term = v * (kp * (1 - p**q2) / q2 + (1 - kp) * (1 - p_neg**q3) / q3)
    u = (1 - v).clamp(lam2, lam1)
    unobserved = torch.where(
        positive, u * bce(p, p_neg, rho),
        torch.where(negative, -v * log(p_neg), gr_term))
    return (by_label(s, -log(p), -log(p_neg), unobserved).mean() +
            reg * expected_positives_penalty(p, k))
