"""Non-finite or out-of-range hyperparameters fail at construction, naming
the parameter."""
import math

import pytest
import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from mmengine.optim import OptimWrapper
from types import SimpleNamespace

from spml_mm.engine.hooks import SPMLDivergenceGuardHook
from spml_mm.models.losses.an_loss import ANLoss
from spml_mm.models.losses.consistency import ViewConsistency
from spml_mm.models.losses.em_loss import EMLoss
from spml_mm.models.losses.epr_loss import EPRLoss
from spml_mm.models.losses.gr import GRLoss
from spml_mm.models.losses.lasd_loss import LASDLoss
from spml_mm.models.losses.opml_loss import OPMLLoss
from spml_mm.models.losses.role_loss import ROLELoss
from spml_mm.models.losses.unified_spml_loss import UnifiedSPMLLoss

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize('build, message', [
    (lambda v: ANLoss(unobserved_weight=v), 'unobserved_weight must be a '
     'float >= 0'),
    (lambda v: ViewConsistency(alpha=v), 'alpha must be >= 0'),
    (lambda v: EMLoss(alpha=v), 'alpha must be a float >= 0'),
    (lambda v: EMLoss(beta=v), 'beta must be a float >= 0'),
    (lambda v: GRLoss(q2=v), '^q2 must be finite'),
    (lambda v: GRLoss(w=(0., v)), '^w must be finite'),
    (lambda v: GRLoss(mu=v), '^mu must be finite'),
    (lambda v: LASDLoss(lambda_pos=v, tau=0.5, lambda_neg=1.),
     'lambda_pos must be >= 0'),
    (lambda v: LASDLoss(lambda_pos=1., tau=v, lambda_neg=1.),
     r'tau must be in \[0, 1\]'),
    (lambda v: LASDLoss(lambda_pos=1., tau=0.5, lambda_neg=v),
     'lambda_neg must be >= 0'),
    (lambda v: OPMLLoss(a=v), r'a must be in \(0, 1\)'),
    (lambda v: OPMLLoss(rank_weight=v),
     r'rank_weight \(lambda\) must be >= 0'),
    (lambda v: OPMLLoss(rank_delta=v),
     r'rank_delta \(delta\) must be > 0'),
    (lambda v: OPMLLoss(gamma=v), 'gamma must be >= 0'),
    (lambda v: EPRLoss(expected_positives=v),
     r'expected_positives \(k\) must be a finite number > 0'),
    (lambda v: ROLELoss(expected_positives=v),
     r'expected_positives \(k\) must be a finite number > 0'),
    (lambda v: ANLoss(label_smoothing=v), r'label_smoothing must be in'),
])
@pytest.mark.parametrize('value', [NAN, INF, -INF])
def test_non_finite_hyperparameters_are_refused(build, message, value):
    with pytest.raises(ValueError, match=message) as error:
        build(value)
    assert str(value) in str(error.value)


@pytest.mark.parametrize('key', ['w', 'b', 'mu', 'sigma', 'q1', 'q2', 'q3'])
def test_gr_refusals_name_the_users_key(key):
    """GRLoss(q3=inf) names q3, not the framework's l3.q; so does every
    GR key, while UnifiedSPMLLoss names its own component keys."""
    with pytest.raises(ValueError) as error:
        GRLoss(**{key: INF})
    assert str(error.value) == f'{key} must be finite, got inf'
    domain = dict(mu='in [0, 1]', sigma='> 0', q1='> 0', q2='> 0',
                  q3='> 0').get(key)
    if domain is not None:
        with pytest.raises(ValueError) as error:
            GRLoss(**{key: -1.})
        assert str(error.value) == (f'{key} must be {domain} (at every '
                                    'point of its schedule), got -1.0')
    with pytest.raises(ValueError, match='^w must be a number or a '):
        GRLoss(w=(0., 1., 2.))
    with pytest.raises(ValueError,
                       match=r'^trainable_beta needs num_classes'):
        GRLoss(trainable_beta=True)
    with pytest.raises(ValueError, match=r'^l3\.q must be finite'):
        UnifiedSPMLLoss(l3=dict(type='gce_neg', q=INF))


@pytest.mark.parametrize('lr', [NAN, INF, -1.])
def test_non_finite_learning_rate_is_refused_before_training(lr):
    model = nn.Linear(2, 1)
    # torch.optim.SGD refuses NaN and negative rates itself, not inf
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.param_groups[0]['lr'] = lr
    runner = SimpleNamespace(optim_wrapper=OptimWrapper(optimizer),
                             message_hub=MessageHub('lr_check'))
    with pytest.raises(ValueError,
                       match=rf'optimizer learning rate lr={lr} \(param '
                       r'group 0\) must be a finite number >= 0'):
        SPMLDivergenceGuardHook().before_train(runner)


@pytest.mark.parametrize('build', [
    lambda: ANLoss(label_smoothing='0.1'),
    lambda: EPRLoss(expected_positives='2'),
])
def test_a_string_is_refused_with_a_message(build):
    with pytest.raises(ValueError, match="got '"):
        build()


@pytest.mark.parametrize('mu', [(0.5, 1.2), (-0.1, 0.8), 1.5])
def test_a_gaussian_centre_outside_the_probabilities_is_refused(mu):
    """GR's v centres on a probability: a schedule that leaves [0, 1] at
    either end is refused when built."""
    with pytest.raises(ValueError,
                       match=r'^mu must be in \[0, 1\] \(at every point of '
                       r'its schedule\)'):
        GRLoss(mu=mu)
    GRLoss(mu=(0., 1.))
