"""Build a config's model and load a trained checkpoint into it."""
import copy
from typing import Optional, Sequence, Union

import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner.checkpoint import _load_checkpoint_to_model
from mmpretrain.registry import MODELS

from spml_mm.utils import check_checkpoint_fits, load_checkpoint_safely


def build_model(cfg: Config, pretrained: bool = False) -> torch.nn.Module:
    """The model of a config as the runner builds it.

    The config's top-level ``data_preprocessor`` goes into the model, as
    MMEngine's runner does. Unless ``pretrained``, the backbone's
    ``init_cfg`` is dropped, so that no weights are downloaded.
    """
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model_cfg = copy.deepcopy(cfg.model)
    # a copy: building the model changes the dicts it is given
    model_cfg.setdefault('data_preprocessor',
                         copy.deepcopy(cfg.get('data_preprocessor')))
    if not pretrained:
        model_cfg.backbone.init_cfg = None
    return MODELS.build(model_cfg)


def resolve_device(device: Optional[str] = None) -> str:
    """``device``, or CUDA when available, else the CPU; a CUDA device on a
    machine without one is refused (``ValueError``) with the fix, before
    torch's driver error."""
    if device is None:
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    if str(device).startswith('cuda') and not torch.cuda.is_available():
        raise ValueError(
            f'--device {device}: no CUDA GPU is visible here '
            '(torch.cuda.is_available() is False); use --device cpu, or '
            'leave --device out to take a GPU when there is one')
    return device


def check_fit(cfg: Config, checkpoint: dict, filename: str) -> None:
    """Refuse a checkpoint that does not fit the config's model
    (:class:`~spml_mm.utils.CheckpointMismatchError`, as ``tools/test.py``),
    unless the config sets ``load_strict=False``; before anything else is
    read from it."""
    if cfg.get('load_strict', True):
        check_checkpoint_fits(checkpoint, build_model(cfg), filename)


def load_model(cfg: Config,
               checkpoint: Union[str, dict],
               device: Optional[str] = None,
               filename: Optional[str] = None) -> torch.nn.Module:
    """The config's model with the checkpoint's weights, in eval mode, on
    ``device`` (default: CUDA when available, else the CPU).

    A checkpoint that does not fit the config's model is refused as
    ``tools/test.py`` refuses it
    (:class:`~spml_mm.utils.CheckpointMismatchError`, naming what differs
    and the fix), unless the config sets ``load_strict=False``.

    Args:
        cfg (Config): The config.
        checkpoint (str | dict): The checkpoint file, or its loaded content.
        device (str, optional): The device (see :func:`resolve_device`).
        filename (str, optional): The checkpoint's file name for the
            messages, when ``checkpoint`` is its content.
    """
    device = resolve_device(device)
    if isinstance(checkpoint, str):
        filename = filename or checkpoint
        checkpoint = load_checkpoint_safely(checkpoint, map_location='cpu')
    model = build_model(cfg)
    if cfg.get('load_strict', True):
        check_checkpoint_fits(checkpoint, model, filename or 'checkpoint')
    _load_checkpoint_to_model(model, checkpoint, strict=False)
    return model.to(device).eval()


def checkpoint_classes(checkpoint: Union[str, dict],
                       num_classes: int) -> Sequence[str]:
    """The class names a checkpoint was trained with (its meta's
    ``dataset_meta``), else ``0 .. num_classes - 1``."""
    if isinstance(checkpoint, str):
        checkpoint = load_checkpoint_safely(checkpoint, map_location='cpu')
    meta = checkpoint.get('meta', {}) or {}
    classes = (meta.get('dataset_meta') or {}).get('classes')
    return list(classes) if classes else [str(k) for k in range(num_classes)]
