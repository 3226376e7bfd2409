"""The training step that the GPU tools time and profile
(``benchmark.speed_gpu``, ``benchmark.head_profile``): each
method's ResNet-50 config, MMPretrain's stock head, the model and its
optimizer as the runner builds them, synthetic batches, and the device and
versions a table was measured with."""
import copy
import os.path as osp
import platform

import mmengine
import mmpretrain
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm
from spml_mm.apis import get_method, list_methods
from benchmark.spml_setups import num_views as setup_views
from benchmark.spml_setups import start_schedules
from benchmark.common import REPO

#: table label -> key of every method with ResNet-50 configs (its card)
METHODS = {
    get_method(m).label: m
    for m in list_methods(variants=True, suite='coco')
}
#: precision -> AMP dtype (None: fp32)
PRECISIONS = {'fp32': None, 'fp16': 'float16', 'bf16': 'bfloat16'}
STOCK_HEAD = dict(type='MultiLabelLinearClsHead',
                  loss=dict(type='CrossEntropyLoss', use_sigmoid=True))
TINY_BACKBONE = dict(type='ResNet', depth=18, stem_channels=8,
                     base_channels=8, out_indices=(3, ))


#: classes of the datasets whose configs the tools load
NUM_CLASSES = dict(coco=80, voc=20)


def load(method: str, dataset: str, args) -> Config:
    """The ResNet-50 config of ``method`` (a key of :data:`METHODS`, or
    ``stock``: AN's with MMPretrain's head) on ``dataset``, at the batch
    and image size of ``args`` (``--tiny``: a tiny ResNet-18)."""
    stock = method == 'stock'
    method = 'AN' if stock else method
    cfg = Config.fromfile(
        osp.join(REPO, get_method(METHODS[method]).config(dataset)))
    cfg.train_dataloader.batch_size = args.batch_size
    for step in cfg.train_dataloader.dataset.pipeline:
        if step['type'] in ('Resize', 'RandomResizedCrop'):
            step['scale'] = args.img_size if step['type'] != 'Resize' \
                else (args.img_size, args.img_size)
    if args.tiny:
        cfg.model.backbone = TINY_BACKBONE
        cfg.model.head.in_channels = 64
    if stock:
        cfg.model.head = dict(STOCK_HEAD, num_classes=NUM_CLASSES[dataset],
                              in_channels=cfg.model.head.in_channels)
    return cfg


def num_views(cfg: Config) -> int:
    """The views of each image a config's step runs on: its training
    pipeline's MultiView (LASD's 3, IGNORE's 2) with the multi-view
    preprocessor, else 1."""
    if cfg.data_preprocessor.get('type') != 'MultiViewDataPreprocessor':
        return 1
    return setup_views(cfg)


def with_precision(cfg: Config, precision: str) -> Config:
    """The config as ``tools/train.py --amp`` (and ``--cfg-options
    optim_wrapper.dtype=bfloat16``) trains it."""
    cfg = copy.deepcopy(cfg)
    if PRECISIONS[precision]:
        cfg.optim_wrapper.update(type='AmpOptimWrapper', loss_scale='dynamic',
                                 dtype=PRECISIONS[precision])
    return cfg


def build(cfg: Config, device: str, num_samples: int):
    """Model, optimizer wrapper and the train step (compiled as MMEngine
    compiles it) of a config, on ``device``."""
    init_default_scope('mmpretrain')
    model_cfg = copy.deepcopy(cfg.model)
    model_cfg.setdefault('data_preprocessor', cfg.get('data_preprocessor'))
    model = MODELS.build(model_cfg)
    bank = getattr(model.head, 'label_bank', None)
    if bank is not None:
        bank.allocate(num_samples)
    start_schedules(model, cfg, epoch=2)
    model = model.to(device).train()
    if cfg.get('gpu_fast', {}).get('channels_last'):
        model = model.to(memory_format=torch.channels_last)
    wrapper = build_optim_wrapper(model, copy.deepcopy(cfg.optim_wrapper))
    step = model.train_step
    if cfg.get('compile'):
        step = torch.compile(step, **({} if cfg.compile is True else
                                      cfg.compile))
    return model, wrapper, step


def synthetic_batch(batch: int, size: int, num_classes: int,
                    num_views: int) -> dict:
    """A pseudo-collated batch of uint8 images with one positive each."""
    g = torch.Generator().manual_seed(0)

    def images():
        return [torch.randint(0, 256, (3, size, size), dtype=torch.uint8,
                              generator=g) for _ in range(batch)]

    samples = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label(
            [int(torch.randint(num_classes, (), generator=g))])
        for i in range(batch)
    ]
    inputs = images() if num_views == 1 else [
        images() for _ in range(num_views)]
    return dict(inputs=inputs, data_samples=samples)


def fresh(data: dict) -> dict:
    """The batch with new data samples (the preprocessor writes labels into
    them), sharing the host images."""
    return dict(data, data_samples=[s.new() for s in data['data_samples']])


def environment(args) -> str:
    """The device of ``args.device`` and the versions, for a page."""
    if args.device.startswith('cuda'):
        device = (f'{torch.cuda.get_device_name()}, CUDA '
                  f'{torch.version.cuda}, cuDNN '
                  f'{torch.backends.cudnn.version()}')
    else:
        device = f'CPU ({platform.processor() or platform.machine()}, ' \
            f'{torch.get_num_threads()} threads)'
    return (f'{device}; torch {torch.__version__}, mmengine '
            f'{mmengine.__version__}, mmpretrain {mmpretrain.__version__}, '
            f'spml-mm {spml_mm.__version__}')
