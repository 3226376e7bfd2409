from .gpu_fast_runner import (GPU_FAST_DEFAULTS, SPMLGPUFastRunner,
                              apply_gpu_fast)

__all__ = ['GPU_FAST_DEFAULTS', 'SPMLGPUFastRunner', 'apply_gpu_fast']
