from typing import Any

import numpy as np
from mmengine.hooks import Hook
from mmengine.logging import HistoryBuffer
from mmpretrain.registry import HOOKS

#: Marks a :class:`HistoryBuffer` stored as plain lists.
HISTORY_BUFFER_TAG = '__history_buffer__'


def to_plain(obj: Any) -> Any:
    """Replace history buffers and numpy values by builtin types, recursively.
    """
    if isinstance(obj, HistoryBuffer):
        log, count = obj.data
        return {
            HISTORY_BUFFER_TAG: True,
            'log_history': log.tolist(),
            'count_history': count.tolist(),
            'max_length': obj.max_length
        }
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.tolist()
    if isinstance(obj, dict):
        return type(obj)((k, to_plain(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_plain(v) for v in obj)
    return obj


def from_plain(obj: Any) -> Any:
    """Rebuild the history buffers that :func:`to_plain` stored, recursively.
    """
    if isinstance(obj, dict):
        if obj.get(HISTORY_BUFFER_TAG):
            return HistoryBuffer(obj['log_history'], obj['count_history'],
                                 obj['max_length'])
        return type(obj)((k, from_plain(v)) for k, v in obj.items())
    return obj


@HOOKS.register_module()
class SafeCheckpointHook(Hook):
    """Keep checkpoints loadable by ``torch.load(weights_only=True)``.

    MMEngine stores its message hub (``HistoryBuffer`` objects and numpy
    values) by pickling; PyTorch >= 2.6 refuses those globals by default, and
    allowing them (``builtins.getattr`` among them) would let any checkpoint
    run code. This hook stores the message hub and meta information as
    builtin types when saving and rebuilds the buffers when loading, so
    ``--resume`` and ``tools/test.py`` work with the safe loader.
    """

    priority = 'VERY_LOW'

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        for key in ('meta', 'message_hub'):
            if key in checkpoint:
                checkpoint[key] = to_plain(checkpoint[key])

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        if 'message_hub' in checkpoint:
            checkpoint['message_hub'] = from_plain(checkpoint['message_hub'])
