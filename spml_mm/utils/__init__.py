from .atomic_backend import AtomicLocalBackend, write_atomically
from .checkpoint import (UnsafeCheckpointError, find_last_checkpoint,
                         load_checkpoint_safely)
from .device import to_device
from .dist import (DistributedTimeoutError, destroy_distributed,
                   explain_distributed_timeout, setup_cpu_distributed)

__all__ = [
    'AtomicLocalBackend', 'DistributedTimeoutError', 'UnsafeCheckpointError',
    'destroy_distributed', 'explain_distributed_timeout',
    'find_last_checkpoint', 'load_checkpoint_safely', 'setup_cpu_distributed',
    'to_device', 'write_atomically'
]
