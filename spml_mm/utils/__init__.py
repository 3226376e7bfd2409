from .checkpoint import UnsafeCheckpointError, load_checkpoint_safely
from .dist import destroy_distributed, setup_cpu_distributed

__all__ = [
    'UnsafeCheckpointError', 'destroy_distributed', 'load_checkpoint_safely',
    'setup_cpu_distributed'
]
