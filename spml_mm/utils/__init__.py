from .atomic_backend import AtomicLocalBackend, write_atomically
from .checkpoint import (DamagedCheckpointError, UnsafeCheckpointError,
                         find_last_checkpoint, load_checkpoint_safely,
                         newest_intact_checkpoint)
from .checkpoint_fit import (CheckpointMismatchError, check_checkpoint_fits,
                             checkpoint_differences, model_signature)
from .dist import (DistributedTimeoutError, destroy_distributed,
                   explain_distributed_timeout, setup_cpu_distributed)
from .work_dir import WorkDirInUseError, check_train_schedule, claim_work_dir

__all__ = [
    'AtomicLocalBackend', 'CheckpointMismatchError', 'DamagedCheckpointError',
    'DistributedTimeoutError', 'UnsafeCheckpointError', 'WorkDirInUseError',
    'check_checkpoint_fits', 'check_train_schedule', 'checkpoint_differences',
    'claim_work_dir', 'destroy_distributed', 'explain_distributed_timeout',
    'find_last_checkpoint', 'load_checkpoint_safely', 'model_signature',
    'newest_intact_checkpoint', 'setup_cpu_distributed', 'write_atomically'
]
