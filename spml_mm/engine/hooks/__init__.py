from .dataset_check_hook import SPMLDatasetCheckHook
from .divergence_guard_hook import DivergenceError, SPMLDivergenceGuardHook
from .early_stopping_hook import SPMLEarlyStoppingHook
from .epoch_hook import SPMLEpochHook
from .multi_view_check_hook import MultiViewCheckHook
from .preflight_hook import SPMLPreflightHook
from .pseudo_label_hook import SPMLPseudoLabelHook
from .random_state_hook import SPMLRandomStateHook
from .safe_checkpoint_hook import SafeCheckpointHook
from .sample_state_hook import SPMLSampleStateHook
from .spml_checkpoint_hook import SPMLCheckpointHook
from .sync_norm_buffers_hook import SPMLSyncNormBuffersHook
from .teacher_score_hook import SPMLTeacherScoreHook

__all__ = [
    'DivergenceError', 'MultiViewCheckHook', 'SPMLDatasetCheckHook',
    'SPMLCheckpointHook', 'SPMLDivergenceGuardHook', 'SafeCheckpointHook',
    'SPMLEarlyStoppingHook', 'SPMLEpochHook', 'SPMLPreflightHook',
    'SPMLPseudoLabelHook', 'SPMLRandomStateHook', 'SPMLSampleStateHook',
    'SPMLSyncNormBuffersHook', 'SPMLTeacherScoreHook'
]
