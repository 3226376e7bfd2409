"""What a checkpoint fits, and whether it fits the model that loads it."""
import hashlib
from typing import Dict, List, Optional, Tuple

import torch.nn as nn

from spml_mm.version import __version__

#: Where a checkpoint's ``meta`` records :func:`model_signature`.
SIGNATURE_KEY = 'spml_model'

#: Shown in every refusal: how to load a checkpoint that does not fit.
OVERRIDE_HINT = ('to load it anyway (matching weights only, the others '
                 'left as initialised), pass --cfg-options load_strict=False')


class CheckpointMismatchError(ValueError):
    """A checkpoint was written for another model than the one loading it."""


def _per_sample_prefixes(model: nn.Module) -> Tuple[str, ...]:
    # per-sample state (label banks, estimate tables) is sized by the
    # training set, not by the architecture: its first dimension may differ
    return tuple(
        f'{name}.' for name, m in model.named_modules()
        if name and callable(getattr(m, 'allocate', None)))


def _shapes(state: dict, per_sample: Tuple[str, ...]) -> Dict[str, tuple]:
    return {
        key: tuple(value.shape)[1 if key.startswith(per_sample) else 0:]
        for key, value in state.items() if hasattr(value, 'shape')
    }


def model_signature(model: nn.Module) -> dict:
    """What a checkpoint of ``model`` fits.

    Args:
        model (nn.Module): The (unwrapped) model.

    Returns:
        dict: ``architecture`` (a hash of the state dict's keys and shapes,
        per-sample state counted without its number of samples),
        ``num_classes`` of the head, ``method`` (the loss type, with the
        label bank's type when there is one) and the plugin ``version``.
    """
    shapes = _shapes(model.state_dict(), _per_sample_prefixes(model))
    text = ';'.join(f'{k}:{v}' for k, v in sorted(shapes.items()))
    head = getattr(model, 'head', None)
    loss = getattr(head, 'loss_module', None)
    bank = getattr(head, 'label_bank', None)
    method = '+'.join(
        type(m).__name__ for m in (loss, bank) if m is not None) or None
    return dict(
        architecture=hashlib.sha1(text.encode()).hexdigest()[:16],
        num_classes=getattr(head, 'num_classes', None),
        method=method,
        version=__version__)


def _state_dict(checkpoint: dict) -> dict:
    state = checkpoint.get('state_dict', checkpoint)
    return {
        (k[len('module.'):] if k.startswith('module.') else k): v
        for k, v in state.items()
    }


def _list(keys: List[str], limit: int = 3) -> str:
    shown = ', '.join(keys[:limit])
    return shown + (f' and {len(keys) - limit} more'
                    if len(keys) > limit else '')


def checkpoint_differences(checkpoint: dict,
                           model: nn.Module,
                           resume: bool = False) -> List[str]:
    """How ``checkpoint`` differs from ``model``, one line per difference.

    The weights are compared key by key and shape by shape (whatever wrote
    the checkpoint); the classes and the method by the signature its meta
    records (checkpoints written by ``SPMLCheckpointHook``). The method
    matters only to ``resume``: the weights of another method's run are
    scored correctly, but its training state does not continue this one.

    Args:
        checkpoint (dict): The loaded checkpoint.
        model (nn.Module): The (unwrapped) model about to load it.
        resume (bool): Training continues from it. Defaults to False.

    Returns:
        list[str]: Empty when it fits.
    """
    per_sample = _per_sample_prefixes(model)
    ours = _shapes(model.state_dict(), per_sample)
    theirs = _shapes(_state_dict(checkpoint), per_sample)
    missing = sorted(set(ours) - set(theirs))
    unexpected = sorted(set(theirs) - set(ours))
    reshaped = sorted(k for k in set(ours) & set(theirs)
                      if ours[k] != theirs[k])
    found = []
    if missing:
        found.append(f'architecture: {len(missing)} weights of the model are '
                     f'not in the checkpoint ({_list(missing)})')
    if unexpected:
        found.append(f'architecture: {len(unexpected)} weights of the '
                     'checkpoint are not in the model '
                     f'({_list(unexpected)})')
    if reshaped:
        found.append('shapes: ' + _list([
            f'{k} is {theirs[k]} in the checkpoint, {ours[k]} in the model'
            for k in reshaped
        ]))
    recorded: Optional[dict] = (checkpoint.get('meta') or {}).get(
        SIGNATURE_KEY)
    if recorded:
        current = model_signature(model)
        keys = ('num_classes', 'method') if resume else ('num_classes', )
        for key in keys:
            if recorded.get(key) != current[key]:
                found.append(f'{key}: {recorded.get(key)} in the checkpoint, '
                             f'{current[key]} in the config')
    return found


def check_checkpoint_fits(checkpoint: dict,
                          model: nn.Module,
                          filename: str,
                          resume: bool = False) -> None:
    """Refuse a checkpoint that does not fit ``model``, saying what differs.

    Args:
        checkpoint (dict): The loaded checkpoint.
        model (nn.Module): The (unwrapped) model about to load it.
        filename (str): Where the checkpoint comes from (for the message).
        resume (bool): Training continues from it. Defaults to False.

    Raises:
        CheckpointMismatchError: It does not fit.
    """
    found = checkpoint_differences(checkpoint, model, resume)
    if found:
        raise CheckpointMismatchError(
            f'checkpoint {filename} does not fit the model of this config:\n'
            + '\n'.join(f'  - {line}' for line in found) +
            f'\nUse the config it was trained with, or, {OVERRIDE_HINT}.')
