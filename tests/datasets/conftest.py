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


def _read_outputs(out):
    return {
        name: open(osp.join(out, name), 'rb').read()
        for name in sorted(os.listdir(out)) if name != 'images'
    }


def _reprepare(dataset, root, work_dir, other_seed):
    from spml_mm.datasets import prepare_official

    outs = [osp.join(str(work_dir), f'run{k}') for k in range(3)]
    for out, seed in zip(outs, (1200, 1200, other_seed)):
        prepare_official(dataset, root, out, seed=seed)
    first, again, other = (_read_outputs(out) for out in outs)
    assert len(first) == 7  # six .npy files and classes.txt
    return (sorted(n for n in first if first[n] != again[n]),
            sorted(n for n in first if first[n] != other[n]))


@pytest.fixture
def reprepare():
    """``reprepare(dataset, root, work_dir, other_seed)``: prepare twice with
    seed 1200 and once with ``other_seed``; return the names of the files
    that differ between the first two runs, and between the first and the
    third."""
    return _reprepare


@pytest.fixture
def write_image():
    """``write_image(path, value=0)``: a 4x3 RGB image."""
    return _write_image


@pytest.fixture
def config_dataset():
    """``config_dataset(config, split, data_root)``: the config's dataset of
    ``split`` on another ``data_root``, without pipeline."""
    return _config_dataset
