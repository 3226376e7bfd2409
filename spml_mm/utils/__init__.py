from .checkpoint import UnsafeCheckpointError, load_checkpoint_safely
from .dist import setup_cpu_distributed

__all__ = [
    'UnsafeCheckpointError', 'load_checkpoint_safely', 'setup_cpu_distributed'
]
