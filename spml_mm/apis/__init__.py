"""The plugin's methods (their cards), and using a trained SPML model:
label sets from images, thresholds chosen without full labels, export."""
from .export import LabelSetModel, export_onnx
from .inferencer import SPMLInferencer
from .methods import Method, get_method, list_methods
from .model import (build_model, checkpoint_classes, load_model,
                    resolve_device)
from .scoring import score_split, split_loader
from spml_mm.models.heads import apply_decision
from .serving import LabelSetService
from .thresholds import (METHODS, apply_thresholds, calibrate,
                         checkpoint_record, default_thresholds_path,
                         load_thresholds, model_identity,
                         record_in_checkpoint, resolve_decision,
                         save_thresholds)

__all__ = [
    'LabelSetModel', 'LabelSetService', 'METHODS', 'Method', 'SPMLInferencer',
    'apply_decision', 'apply_thresholds', 'build_model', 'calibrate',
    'checkpoint_classes', 'checkpoint_record', 'record_in_checkpoint',
    'default_thresholds_path', 'export_onnx', 'get_method', 'list_methods',
    'load_model', 'load_thresholds', 'model_identity', 'resolve_decision',
    'resolve_device', 'save_thresholds', 'score_split', 'split_loader'
]
