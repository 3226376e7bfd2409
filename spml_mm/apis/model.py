"""Build a config's model and load a trained checkpoint into it."""
import copy
from typing import Optional, Sequence

import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import load_checkpoint
from mmpretrain.registry import MODELS

from spml_mm.utils import load_checkpoint_safely


def build_model(cfg: Config, pretrained: bool = False) -> torch.nn.Module:
    """The model of a config as the runner builds it.

    The config's top-level ``data_preprocessor`` goes into the model, as
    MMEngine's runner does. Unless ``pretrained``, the backbone's
    ``init_cfg`` is dropped, so that no weights are downloaded.
    """
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model_cfg = copy.deepcopy(cfg.model)
    model_cfg.setdefault('data_preprocessor', cfg.get('data_preprocessor'))
    if not pretrained:
        model_cfg.backbone.init_cfg = None
    return MODELS.build(model_cfg)


def load_model(cfg: Config,
               checkpoint: str,
               device: Optional[str] = None) -> torch.nn.Module:
    """The config's model with the checkpoint's weights, in eval mode, on
    ``device`` (default: CUDA when available, else the CPU)."""
    model = build_model(cfg)
    load_checkpoint(model, checkpoint, map_location='cpu', strict=True)
    device = device or ('cuda' if torch.cuda.is_available() else 'cpu')
    return model.to(device).eval()


def checkpoint_classes(checkpoint: str,
                       num_classes: int) -> Sequence[str]:
    """The class names a checkpoint was trained with (its meta's
    ``dataset_meta``), else ``0 .. num_classes - 1``."""
    meta = load_checkpoint_safely(checkpoint, map_location='cpu').get(
        'meta', {})
    classes = (meta.get('dataset_meta') or {}).get('classes')
    return list(classes) if classes else [str(k) for k in range(num_classes)]
