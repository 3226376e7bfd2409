"""The interface every kind of label bank implements (BaseLabelBank): what
it gives the loss, who writes it, what it saves, and its size checks."""
import pytest
import torch
from mmpretrain.registry import MODELS

from spml_mm.models import BaseLabelBank

# kind, the loss's keyword arguments, who writes it, the hook that sizes it
KINDS = [
    (dict(type='LabelBank'), ('pseudo_label', 'soft_label'), 'updater',
     'SPMLPseudoLabelHook'),
    (dict(type='LabelBank', storage='uint8'), ('pseudo_label', 'soft_label'),
     'updater', 'SPMLPseudoLabelHook'),
    (dict(type='OPMLLabelBank'), ('pseudo_label', 'class_ap'), 'updater',
     'SPMLPseudoLabelHook'),
    (dict(type='CorrectedLabelBank'), ('pseudo_label', 'write_corrections'),
     'loss', 'SPMLSampleStateHook'),
    (dict(type='LabelEstimateTable', lr=0.1),
     ('estimate_logits', 'step_estimates'), 'loss', 'SPMLSampleStateHook'),
]
TARGET = torch.tensor([[0., 1., 0.], [1., 0., 0.]])


def build(cfg):
    return MODELS.build(cfg, default_args=dict(num_classes=3))


@pytest.mark.parametrize('cfg, keys, writer, hook', KINDS)
def test_every_bank_implements_the_interface(cfg, keys, writer, hook):
    bank = build(cfg)
    assert isinstance(bank, BaseLabelBank)
    assert bank.ENTRY_KEYS == keys and bank.WRITTEN_BY == writer
    with pytest.raises(RuntimeError, match=f'is empty; add .*{hook}'):
        bank.entries(torch.tensor([3, 1]), TARGET)
    bank.allocate(4)
    assert bank.num_samples == 4
    assert all(getattr(bank, name).size(0) == 4 for name in bank.row_buffers)
    assert tuple(bank.entries(torch.tensor([3, 1]), TARGET)) == keys
    with pytest.raises(ValueError, match='sample_idx 4 is outside the '):
        bank.entries(torch.tensor([1, 4]), TARGET)
    with pytest.raises(ValueError, match='holds 4 samples but the training '
                       'set has 5'):
        bank.allocate(5)


@pytest.mark.parametrize('cfg, keys, writer, hook', KINDS)
def test_what_a_bank_saves(cfg, keys, writer, hook):
    torch.manual_seed(0)
    bank = build(cfg)
    bank.allocate(4)
    for name, buf in bank.state_dict().items():
        # some state to carry: a random pattern in every saved buffer
        buf.copy_(torch.randint(2, buf.shape).to(buf.dtype))
    state = bank.state_dict()
    assert set(bank.row_buffers) - {'trained'} <= set(state)
    # an empty bank (tools/test.py) takes the size of the checkpoint's
    empty = build(cfg)
    empty.load_state_dict(state)
    for name, buf in empty.state_dict().items():
        assert torch.equal(buf, state[name]), name
    # a bank sized for another training set refuses it
    other = build(cfg)
    other.allocate(5)
    with pytest.raises(ValueError, match=r"checkpoint's .* holds 4 samples "
                       'but the training set has 5'):
        other.load_state_dict(state)
