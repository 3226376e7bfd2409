from typing import Optional, Tuple, Union

from mmpretrain.registry import MODELS

from .unified_spml_loss import UnifiedSPMLLoss

Schedule = Union[float, Tuple[float, float]]


@MODELS.register_module()
class GRLoss(UnifiedSPMLLoss):
    """Generalized robust (GR) loss for SPML (Chen et al., IJCAI 2024).

    A preset of the unified framework (:class:`UnifiedSPMLLoss`, which
    checks the arguments and computes the loss) with the GR components:
    the soft pseudo-label ``k(p; beta) = sigmoid(w p + b)``, the weight
    ``v(p; alpha) = exp(-(p - mu)^2 / (2 sigma^2))`` of unobserved entries,
    and the robust losses of paper Eq. 14. ``w``, ``b``, ``mu`` and ``sigma``
    are ``(start, end)`` pairs moved before every epoch by ``SPMLEpochHook``
    with the release's semantics (beta at ``epoch / T``, alpha at
    ``(epoch + 1) / T``, 0-based epoch); a single number keeps the value
    fixed. Defaults are the release's and the VOC column of Table 6. The
    loss is :func:`~spml_mm.models.losses.gr.gr_value_and_grad`
    (docs/methods/grloss.md); with ``trainable_beta``, the framework's
    autograd form of the same components, through which w and b learn.

    Args:
        w (float | tuple): Slope of k, ``(w0, wT)`` of beta. Defaults to
            ``(0., 2.)``; Table 6: ``(0., 10.)`` on COCO, NUS-WIDE and CUB.
        b (float | tuple): Intercept of k, ``(b0, bT)`` of beta. Defaults to
            ``(-2., -2.)``; Table 6: ``(-2., -8.)`` on COCO, NUS-WIDE, CUB.
        mu (float | tuple): Centre of v, ``(mu0, muT)`` of alpha. Defaults
            to ``(0.5, 0.8)``.
        sigma (float | tuple): Width of v, ``(sigma0, sigmaT)`` of alpha,
            > 0. Defaults to ``(2., 0.5)``.
        q1 (float, optional): q1 of ``L1 = (1 - p^q1) / q1`` on the observed
            positive, > 0; None uses ``-log p`` as the release (the paper
            writes q1 = 0.01). Defaults to None.
        q2 (float): q2 of ``L2 = (1 - p^q2) / q2``, > 0. Defaults to 0.01.
        q3 (float): q3 of ``L3 = (1 - (1-p)^q3) / q3``, > 0. Defaults to 1
            (1.5 on CUB in Table 6).
        trainable_beta (bool): Learn ``(w, b)`` per class online instead of
            scheduling them (the paper's Table 3, last row), starting at
            their start values. Defaults to False.
        num_classes (int, optional): Number of classes C, required with
            ``trainable_beta``. Defaults to None.

    Example:
        >>> # COCO, Table 6
        >>> loss = dict(type='GRLoss', w=(0., 10.), b=(-2., -8.),
        ...             mu=(0.5, 0.8), sigma=(2., 0.5), q2=0.01, q3=1.)
        >>> head = dict(type='SPMLLinearClsHead', num_classes=80,
        ...             in_channels=2048, loss=loss)
        >>> custom_hooks = [dict(type='SPMLEpochHook')]
    """

    USER_KEYS = {
        'k.w': 'w',
        'k.b': 'b',
        'v.mu': 'mu',
        'v.sigma': 'sigma',
        'l1.q': 'q1',
        'l2.q': 'q2',
        'l3.q': 'q3',
        'trainable_k': 'trainable_beta'
    }

    def __init__(self,
                 w: Schedule = (0., 2.),
                 b: Schedule = (-2., -2.),
                 mu: Schedule = (0.5, 0.8),
                 sigma: Schedule = (2., 0.5),
                 q1: Optional[float] = None,
                 q2: float = 0.01,
                 q3: float = 1.,
                 trainable_beta: bool = False,
                 num_classes: Optional[int] = None):
        super().__init__(
            preset='gr',
            k=dict(type='logistic', w=w, b=b),
            v=dict(type='gaussian', mu=mu, sigma=sigma),
            l1=dict(type='log') if q1 is None else dict(type='gce', q=q1),
            l2=dict(type='gce', q=q2),
            l3=dict(type='gce_neg', q=q3),
            trainable_k=trainable_beta,
            num_classes=num_classes)
