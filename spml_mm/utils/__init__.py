from .atomic_backend import AtomicLocalBackend, write_atomically
from .checkpoint import (UnsafeCheckpointError, find_last_checkpoint,
                         load_checkpoint_safely)
from .device import to_device
from .dist import (DistributedTimeoutError, destroy_distributed,
                   explain_distributed_timeout, setup_cpu_distributed)
from .launch import (apply_launch_args, drop_disabled_hooks, parse_launch_args,
                     run_runner)

__all__ = [
    'AtomicLocalBackend', 'DistributedTimeoutError', 'UnsafeCheckpointError',
    'apply_launch_args', 'destroy_distributed', 'drop_disabled_hooks',
    'explain_distributed_timeout', 'find_last_checkpoint',
    'load_checkpoint_safely', 'parse_launch_args', 'run_runner',
    'setup_cpu_distributed', 'to_device', 'write_atomically'
]
