from .atomic_backend import AtomicLocalBackend, write_atomically
from .cfg_options import ConfigOptionsAction, add_cfg_options
from .checkpoint import (DamagedCheckpointError, UnsafeCheckpointError,
                         find_best_checkpoint, find_last_checkpoint,
                         load_checkpoint_safely, newest_intact_checkpoint)
from .checkpoint_fit import (CheckpointMismatchError, check_checkpoint_fits,
                             checkpoint_differences, model_signature)
from .device import to_device
from .dist import (DistributedTimeoutError, destroy_distributed,
                   explain_distributed_timeout, setup_cpu_distributed)
from .output_file import (OutputFileError, atomic_output,
                          check_output_file, json_with_format)
from .launch import (apply_launch_args, check_runner_setup,
                     drop_disabled_hooks, parse_launch_args, run_runner)
from .pretrained import PretrainedWeightsError, check_pretrained_weights
from .work_dir import WorkDirInUseError, check_train_schedule, claim_work_dir

__all__ = [
    'AtomicLocalBackend', 'CheckpointMismatchError', 'ConfigOptionsAction',
    'DamagedCheckpointError', 'PretrainedWeightsError',
    'DistributedTimeoutError', 'OutputFileError', 'UnsafeCheckpointError',
    'WorkDirInUseError', 'atomic_output', 'check_output_file',
    'json_with_format',
    'add_cfg_options', 'apply_launch_args', 'check_checkpoint_fits',
    'check_pretrained_weights', 'check_runner_setup', 'check_train_schedule',
    'checkpoint_differences', 'claim_work_dir', 'destroy_distributed',
    'drop_disabled_hooks', 'explain_distributed_timeout',
    'find_best_checkpoint', 'find_last_checkpoint', 'load_checkpoint_safely',
    'model_signature', 'newest_intact_checkpoint', 'parse_launch_args',
    'run_runner', 'setup_cpu_distributed', 'to_device', 'write_atomically'
]
