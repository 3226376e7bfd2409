"""The safe loader names damaged checkpoints; a checkpoint's signature says
what it fits, and a checkpoint that does not fit is refused with what
differs."""
import os
import re
import time

import pytest
import torch
import torch.nn as nn

from spml_mm.models.losses import ANLoss, ROLELoss
from spml_mm.utils import (CheckpointMismatchError, DamagedCheckpointError,
                           UnsafeCheckpointError, check_checkpoint_fits,
                           checkpoint_differences, find_last_checkpoint,
                           load_checkpoint_safely, model_signature)


def save(path, epoch, mtime):
    torch.save(dict(state_dict=dict(w=torch.ones(3)),
                    meta=dict(epoch=epoch)), path)
    os.utime(path, (mtime, mtime))


@pytest.mark.parametrize('damage', ['truncated', 'empty', 'garbage'])
def test_a_damaged_checkpoint_names_itself_and_the_newest_intact_one(
        tmp_path, damage):
    now = time.time()
    save(tmp_path / 'epoch_1.pth', 1, now - 30)
    save(tmp_path / 'epoch_2.pth', 2, now - 20)
    save(tmp_path / 'best_epoch_1.pth', 1, now - 25)
    bad = tmp_path / 'epoch_3.pth'
    save(bad, 3, now)
    data = bad.read_bytes()
    bad.write_bytes(dict(truncated=data[:len(data) // 2], empty=b'',
                         garbage=b'not a checkpoint' * 8)[damage])
    with pytest.raises(DamagedCheckpointError) as err:
        load_checkpoint_safely(str(bad))
    message = str(err.value)
    assert f'checkpoint {bad} is damaged' in message
    assert ('empty' if damage == 'empty' else 'truncated or corrupt') in \
        message
    # the newest file that loads, with the commands that use it
    intact = tmp_path / 'epoch_2.pth'
    assert f'The newest intact checkpoint beside it is {intact}' in message
    assert f'tools/train.py CONFIG --resume {intact}' in message
    assert f'tools/test.py CONFIG {intact}' in message


def test_no_intact_checkpoint_beside_a_damaged_one(tmp_path):
    bad = tmp_path / 'epoch_1.pth'
    bad.write_bytes(b'')
    with pytest.raises(DamagedCheckpointError,
                       match='No intact checkpoint is beside it'):
        load_checkpoint_safely(str(bad))


def test_an_unsafe_object_is_still_refused_as_unsafe(tmp_path):
    path = tmp_path / 'unsafe.pth'
    torch.save(dict(meta=dict(fn=os.path.join)), path)
    with pytest.raises(UnsafeCheckpointError, match='posixpath.join'):
        load_checkpoint_safely(str(path))


class Head(nn.Module):

    def __init__(self, num_classes, loss):
        super().__init__()
        self.num_classes = num_classes
        self.fc = nn.Linear(4, num_classes)
        self.loss_module = loss


class Bank(nn.Module):
    """Per-sample state: its first dimension is the training set's size."""

    def __init__(self, num_classes):
        super().__init__()
        self.register_buffer('soft_label', torch.zeros(0, num_classes))

    def allocate(self, n):
        self.soft_label = torch.zeros(n, self.soft_label.shape[1])


class Model(nn.Module):

    def __init__(self, width=8, num_classes=10, loss=None, bank=False):
        super().__init__()
        self.backbone = nn.Linear(3, width)
        self.head = Head(num_classes, loss or ANLoss())
        self.head.label_bank = Bank(num_classes) if bank else None


def checkpoint_of(model, **meta):
    state = {f'module.{k}': v for k, v in model.state_dict().items()}
    return dict(state_dict=state,
                meta=dict(spml_model=model_signature(model), **meta))


def test_signature_records_architecture_classes_method_and_version():
    sig = model_signature(Model())
    assert sig['num_classes'] == 10 and sig['method'] == 'ANLoss'
    assert re.fullmatch(r'[0-9a-f]{16}', sig['architecture'])
    assert sig['version'] == __import__('spml_mm').__version__
    assert model_signature(Model())['architecture'] == sig['architecture']
    assert model_signature(Model(width=9))['architecture'] != \
        sig['architecture']
    assert model_signature(Model(loss=ROLELoss(2.), bank=True))[
        'method'] == 'ROLELoss+Bank'
    # the number of samples of per-sample state is not architecture
    sized = Model(bank=True)
    sized.head.label_bank.allocate(50)
    assert model_signature(sized)['architecture'] == model_signature(
        Model(bank=True))['architecture']


def test_a_checkpoint_that_fits_passes():
    model = Model(bank=True)
    ckpt = checkpoint_of(model)
    model.head.label_bank.allocate(50)
    check_checkpoint_fits(ckpt, model, 'a.pth', resume=True)
    assert checkpoint_differences(ckpt, model, resume=True) == []


def test_another_architecture_is_refused_with_what_differs():
    ckpt = checkpoint_of(Model(width=8))
    with pytest.raises(CheckpointMismatchError) as err:
        check_checkpoint_fits(ckpt, Model(width=16), 'vgg11.pth')
    message = str(err.value)
    assert message.startswith('checkpoint vgg11.pth does not fit')
    assert ('backbone.weight is (8, 3) in the checkpoint, (16, 3) in the '
            'model') in message
    assert '--cfg-options load_strict=False' in message
    # weights missing on either side (no signature needed)
    extra = Model()
    extra.neck = nn.Linear(2, 2)
    found = checkpoint_differences(
        dict(state_dict=Model().state_dict()), extra)
    assert found == ['architecture: 2 weights of the model are not in the '
                     'checkpoint (neck.bias, neck.weight)']
    found = checkpoint_differences(checkpoint_of(extra), Model())
    assert found[0].startswith('architecture: 2 weights of the checkpoint '
                               'are not in the model (neck.bias')


def test_other_classes_and_method():
    ckpt = checkpoint_of(Model(num_classes=7))
    found = checkpoint_differences(ckpt, Model(num_classes=10))
    assert 'num_classes: 7 in the checkpoint, 10 in the config' in found
    assert any('head.fc.weight is (7, 4) in the checkpoint, (10, 4) in the'
               ' model' in line for line in found)
    # another method with the same weights: scored as they are, not resumed
    ckpt = checkpoint_of(Model(loss=ROLELoss(2.)))
    assert checkpoint_differences(ckpt, Model()) == []
    assert checkpoint_differences(ckpt, Model(), resume=True) == [
        'method: ROLELoss in the checkpoint, ANLoss in the config']
    # a label bank whose classes differ is caught by its shape
    found = checkpoint_differences(checkpoint_of(Model(4, 7, bank=True)),
                                   Model(4, 10, bank=True))
    assert any('head.label_bank.soft_label is (7,)' in line
               for line in found)


def test_an_empty_last_checkpoint_says_it_is_empty(tmp_path):
    """An empty record named the existing work dir as a missing file."""
    record = tmp_path / 'last_checkpoint'
    record.write_text('\n')
    with pytest.raises(FileNotFoundError) as err:
        find_last_checkpoint(str(tmp_path))
    assert str(err.value) == (
        f'{record} is empty: it names no checkpoint (a write of it was cut '
        'short outside the plugin). Pass the checkpoint to resume from with '
        '--resume PATH (e.g. the newest epoch_*.pth in '
        f'{tmp_path}), or delete {record}.')
    record.write_text('epoch_3.pth')
    with pytest.raises(FileNotFoundError, match="names 'epoch_3.pth', but "):
        find_last_checkpoint(str(tmp_path))
