from .gpu_fast_runner import (GPU_FAST_DEFAULTS, SPMLGPUFastRunner,
                              apply_gpu_fast, refuse_without_cuda)

__all__ = [
    'GPU_FAST_DEFAULTS', 'SPMLGPUFastRunner', 'apply_gpu_fast',
    'refuse_without_cuda'
]
