from .dataset_check_hook import SPMLDatasetCheckHook
from .safe_checkpoint_hook import SafeCheckpointHook

__all__ = ['SPMLDatasetCheckHook', 'SafeCheckpointHook']
