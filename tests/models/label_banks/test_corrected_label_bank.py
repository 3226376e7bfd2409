from types import SimpleNamespace

import pytest
import torch
from mmpretrain.structures import DataSample

from spml_mm.engine.hooks import SPMLSampleStateHook
from spml_mm.models import CorrectedLabelBank, LabelBank
from spml_mm.models.heads import SPMLLinearClsHead
from spml_mm.models.losses import LLLoss
from tests.models.label_banks.test_label_bank import entries


def samples(indices):
    return [DataSample(metainfo=dict(sample_idx=i)).set_gt_label([0])
            for i in indices]


@pytest.mark.parametrize('storage', ['full', 'float16', 'uint8'])
def test_corrections_accumulate_in_their_rows(storage):
    bank = CorrectedLabelBank(num_classes=6, num_samples=5, storage=storage)
    rows = entries(bank, [3, 1])
    assert rows['pseudo_label'].eq(0).all()
    rows['write_corrections'](
        torch.tensor([[0, 1, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]]).bool())
    entries(bank, [1, 3])['write_corrections'](
        torch.tensor([[0, 0, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0]]).bool())
    rows = entries(bank, [0, 1, 2, 3, 4])['pseudo_label']
    expected = torch.zeros(5, 6, dtype=torch.int8)
    expected[3, [0, 1, 5]] = 1
    expected[1, 4] = 1
    assert torch.equal(rows, expected)
    # the state travels in the state dict, into a bank of another storage
    other = CorrectedLabelBank(num_classes=6)
    other.load_state_dict(bank.state_dict())
    assert torch.equal(other.pseudo_label, expected)
    bank.merge_ranks()  # one process: nothing changes
    assert torch.equal(
        entries(bank, list(range(5)))['pseudo_label'], expected)


def test_head_passes_the_bank_to_ll_cp_and_refuses_other_losses():
    head = SPMLLinearClsHead(
        num_classes=4, in_channels=3,
        loss=dict(type='LLLoss', scheme='LL-Cp', rate=0.25),
        label_bank=dict(type='CorrectedLabelBank'))
    head.label_bank.allocate(6)
    head.loss_module.set_epoch(1, 3)  # epoch 2: k = ceil(2 * 4 * 0.25) = 2
    feats = torch.randn(2, 3)
    head.loss((feats, ), samples([5, 2]))
    corrected = head.label_bank.pseudo_label == 1
    assert corrected.sum() == 2 and corrected[[5, 2]].sum() == 2
    assert not corrected[:, 0].any()  # observed positives are never picked
    assert isinstance(head.loss_module, LLLoss)
    # a loss that takes no bank entries
    with pytest.raises(ValueError, match='write_corrections'):
        SPMLLinearClsHead(num_classes=4, in_channels=3,
                          loss=dict(type='ANLoss'),
                          label_bank=dict(type='CorrectedLabelBank'))


def test_state_hook_sizes_the_bank_and_needs_one():
    bank = CorrectedLabelBank(num_classes=3)
    dataset = SimpleNamespace()
    runner = SimpleNamespace(
        _train_loop=object(), model=torch.nn.Sequential(bank),
        train_dataloader=SimpleNamespace(dataset=dataset))
    with pytest.raises(ValueError, match='does not support dataset wrappers'):
        SPMLSampleStateHook().before_run(runner)
    runner.model.broadcast_buffers = True  # as a DDP wrapper would say
    with pytest.raises(ValueError, match='broadcast_buffers=False'):
        SPMLSampleStateHook().before_run(runner)
    # a bank written between epochs by an update rule is not its concern
    for model in (torch.nn.Linear(2, 2), LabelBank(num_classes=3)):
        runner.model = torch.nn.Sequential(model)
        with pytest.raises(ValueError, match='found no per-sample state'):
            SPMLSampleStateHook().before_run(runner)
    # test runs keep the size of the checkpoint they load
    runner._train_loop = None
    SPMLSampleStateHook().before_run(runner)
