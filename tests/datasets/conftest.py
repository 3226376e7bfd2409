"""Helpers of the official-layout tests: tiny images and config datasets."""
import os
import os.path as osp

import pytest
from mmengine.config import Config
from PIL import Image

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def _write_image(path, value=0):
    os.makedirs(osp.dirname(path), exist_ok=True)
    Image.new('RGB', (4, 3), (value, 2 * value, 3 * value)).save(path)


def _config_dataset(config, split, data_root):
    import spml_mm  # noqa: F401  (registers the datasets)
    from mmpretrain.registry import DATASETS

    cfg = Config.fromfile(osp.join(REPO, config))
    loader = dict(train='train_dataloader', val='val_dataloader',
                  test='test_dataloader')[split]
    dataset_cfg = cfg[loader]['dataset']
    dataset_cfg.update(data_root=data_root, pipeline=[])
    return DATASETS.build(dataset_cfg)


@pytest.fixture
def write_image():
    """``write_image(path, value=0)``: a 4x3 RGB image."""
    return _write_image


@pytest.fixture
def config_dataset():
    """``config_dataset(config, split, data_root)``: the config's dataset of
    ``split`` on another ``data_root``, without pipeline."""
    return _config_dataset
