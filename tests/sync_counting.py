"""Counting, on a machine without a GPU, what a training step does that
would make the host wait on a GPU.

The model runs on PyTorch's ``meta`` device, which stands in for the GPU:
its tensors have shapes but no values, so every read of a device value
(``.item()``, ``bool(tensor)``, a copy to the host), every operation whose
output shape depends on device values (``nonzero``, boolean-mask indexing)
and every copy from the host (MMEngine's ``cast_data``, an index moved with
``.to(device)``) is a distinct operator call that a ``TorchDispatchMode``
sees. On a GPU each of them synchronises the host with the device, except a
host-to-device copy made with ``non_blocking=True`` (from pinned memory),
which is counted apart. Reads return zeros so that the step runs on.
"""
import traceback
from contextlib import ExitStack, contextmanager
from typing import List, NamedTuple, Optional
from unittest import mock

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

#: Operators whose output shape depends on the values of their input.
DATA_DEPENDENT = {
    aten.nonzero.default, aten.masked_select.default, aten._unique2.default,
    aten.unique_dim.default, aten.unique_consecutive.default,
    aten.repeat_interleave.Tensor
}
#: Indexing operators, data-dependent when indexed by a boolean mask.
INDEXING = {
    aten.index.Tensor, aten.index_put.default, aten.index_put_.default,
    aten._index_put_impl_.default
}


#: The kinds of events that synchronise the host with a GPU.
SYNCS = ('read', 'shape', 'copy')


class Event(NamedTuple):
    """``kind``: ``'read'`` (a device value read on the host),
    ``'shape'`` (a data-dependent shape), ``'copy'`` (a blocking
    host-to-device copy) or ``'async copy'``; ``op``, the operator;
    ``where``, the innermost frame of the code that called it; ``phase``,
    ``'preprocessor'`` inside the data preprocessor, else ``'model'``."""
    kind: str
    op: str
    where: str
    phase: str

    def __str__(self):
        return f'{self.kind}: {self.op} at {self.where} ({self.phase})'


def _empty_result(func, x: torch.Tensor):
    """What a data-dependent operator returns when nothing is selected."""
    empty = x.new_empty((0, ) + tuple(x.shape[1:]))
    index = x.new_empty(0, dtype=torch.long)
    if func is aten.nonzero.default:
        return x.new_empty((0, x.dim()), dtype=torch.long)
    if func is aten.repeat_interleave.Tensor:
        return index
    if func is aten.masked_select.default:
        return x.new_empty(0)
    # unique: values, inverse indices, counts
    return (empty, torch.zeros_like(x, dtype=torch.long), index)


def _caller() -> str:
    for frame in reversed(traceback.extract_stack()[:-3]):
        if '/torch/' not in frame.filename and \
                not frame.filename.endswith('sync_counting.py'):
            return f'{frame.filename}:{frame.lineno} ({frame.name})'
    return '?'


def _on_device(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type != 'cpu'


class SyncCounter(TorchDispatchMode):
    """Records :class:`Event` s in ``events``."""

    def __init__(self):
        super().__init__()
        self.events: List[Event] = []
        self.phase = 'model'

    def _record(self, kind, func):
        self.events.append(Event(kind, func.__name__, _caller(), self.phase))

    def syncs(self, phase: str) -> List[Event]:
        """The synchronising events of one phase."""
        return [e for e in self.events if e.kind in SYNCS and e.phase == phase]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (aten._local_scalar_dense.default,
                    aten._linalg_check_errors.default) and _on_device(
                        args[0]):
            self._record('read', func)
            if func is aten._linalg_check_errors.default:
                return None
            return args[0].dtype.is_floating_point and 0. or (
                False if args[0].dtype == torch.bool else 0)
        if func in DATA_DEPENDENT and _on_device(args[0]):
            self._record('shape', func)
            return _empty_result(func, args[0])
        if func in INDEXING and any(
                _on_device(i) and i.dtype in (torch.bool, torch.uint8)
                for i in args[1] if i is not None):
            self._record('shape', func)
            if func is aten.index.Tensor:
                return args[0].new_empty((0, ) + args[0].shape[1:])
            return args[0]
        if func is aten._to_copy.default:
            source = args[0]
            target = torch.device(kwargs.get('device') or source.device)
            if source.device.type != 'cpu' and target.type == 'cpu':
                self._record('read', func)
                return torch.zeros(source.shape,
                                   dtype=kwargs.get('dtype') or source.dtype)
            if source.device.type == 'cpu' and target.type != 'cpu':
                self._record(
                    'async copy' if kwargs.get('non_blocking') else 'copy',
                    func)
        if func is aten.copy_.default:
            target, source = args[:2]
            if _on_device(source) and not _on_device(target):
                self._record('read', func)
                return target
            if _on_device(target) and not _on_device(source) \
                    and source.dim():
                self._record(
                    'async copy' if len(args) > 2 and args[2] else 'copy',
                    func)
        return func(*args, **kwargs)


def _numpy(original):

    def numpy(tensor, *args, **kwargs):
        mode = torch.utils._python_dispatch._get_current_dispatch_mode()
        if tensor.device.type != 'cpu' and isinstance(mode, SyncCounter):
            mode._record('read', original)
            tensor = torch.zeros(tensor.shape, dtype=tensor.dtype)
        return original(tensor, *args, **kwargs)

    return numpy


@contextmanager
def count_syncs(data_preprocessor: Optional[torch.nn.Module] = None):
    """Yield the :class:`SyncCounter` of the ``with`` block; the events
    inside ``data_preprocessor`` are its ``'preprocessor'`` phase."""
    counter = SyncCounter()
    patches = [mock.patch.object(torch.Tensor, 'numpy',
                                 _numpy(torch.Tensor.numpy))]
    if data_preprocessor is not None:
        original = data_preprocessor.forward

        def forward(*args, **kwargs):
            counter.phase = 'preprocessor'
            try:
                return original(*args, **kwargs)
            finally:
                counter.phase = 'model'

        patches.append(
            mock.patch.object(data_preprocessor, 'forward', forward))
    with ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        with counter:
            yield counter
