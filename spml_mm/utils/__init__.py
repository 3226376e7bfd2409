from .atomic_backend import AtomicLocalBackend, write_atomically
from .checkpoint import (UnsafeCheckpointError, find_last_checkpoint,
                         load_checkpoint_safely)
from .dist import destroy_distributed, setup_cpu_distributed

__all__ = [
    'AtomicLocalBackend', 'UnsafeCheckpointError', 'destroy_distributed',
    'find_last_checkpoint', 'load_checkpoint_safely', 'setup_cpu_distributed',
    'write_atomically'
]
