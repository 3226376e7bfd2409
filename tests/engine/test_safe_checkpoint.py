import os

import numpy as np
import pytest
import torch
from mmengine.logging import HistoryBuffer

from spml_mm.engine.hooks.safe_checkpoint_hook import (SafeCheckpointHook,
                                                       from_plain, to_plain)
from spml_mm.utils import UnsafeCheckpointError, load_checkpoint_safely


def test_message_hub_round_trip(tmp_path):
    buf = HistoryBuffer([0.5, 0.25], [1, 2], max_length=10)
    hub = dict(
        log_scalars={'train/loss': buf},
        runtime_info=dict(eta=np.float64(3.5), ids=np.array([1, 2])),
        resumed_keys={'eta': True})
    checkpoint = dict(
        meta=dict(dataset_meta=dict(classes=('a', 'b')), seed=np.int64(3)),
        message_hub=hub,
        state_dict={'w': torch.ones(2)})
    SafeCheckpointHook().before_save_checkpoint(None, checkpoint)
    path = str(tmp_path / 'ckpt.pth')
    torch.save(checkpoint, path)

    loaded = load_checkpoint_safely(path)  # weights_only=True
    assert loaded['meta']['seed'] == 3
    assert loaded['message_hub']['runtime_info'] == dict(eta=3.5, ids=[1, 2])
    SafeCheckpointHook().after_load_checkpoint(None, loaded)
    restored = loaded['message_hub']['log_scalars']['train/loss']
    assert isinstance(restored, HistoryBuffer)
    assert restored.max_length == 10
    np.testing.assert_array_equal(restored.data[0], [0.5, 0.25])
    np.testing.assert_array_equal(restored.data[1], [1, 2])
    assert restored.mean() == pytest.approx((0.5 + 0.25) / (1 + 2))
    assert to_plain(from_plain(to_plain(hub))) == to_plain(hub)


class Payload:

    def __reduce__(self):
        return (os.system, ('echo pwned',))


def test_arbitrary_object_is_refused(tmp_path):
    path = str(tmp_path / 'evil.pth')
    torch.save(dict(state_dict={}, extra=Payload()), path)
    with pytest.raises(UnsafeCheckpointError,
                       match=r'evil.pth: it contains the pickled object '
                       r'(posix|os)\.system'):
        load_checkpoint_safely(path)
    with pytest.raises(FileNotFoundError, match='does not exist'):
        load_checkpoint_safely(str(tmp_path / 'none.pth'))


def test_mmengine_loader_goes_through_the_safe_path(tmp_path):
    from mmengine.runner.checkpoint import _load_checkpoint
    path = str(tmp_path / 'evil.pth')
    torch.save(dict(extra=Payload()), path)
    with pytest.raises(UnsafeCheckpointError):
        _load_checkpoint(path)
