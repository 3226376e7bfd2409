import copy

import torch
from mmengine.config import Config, ConfigDict
from mmengine.device import is_cuda_available
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from ...datasets.image_cache import with_image_cache

#: The switches of the GPU fast recipe (``gpu_fast`` of a config), each
#: applied on its own by :func:`apply_gpu_fast`.
GPU_FAST_DEFAULTS = dict(
    channels_last=True,
    cudnn_benchmark=True,
    amp='bfloat16',
    batched_copy=True,
    num_workers=8,
    prefetch_factor=4,
    compile=False,
    image_cache=None,
    device_flip=False)

#: Precisions of ``amp``: AmpOptimWrapper settings. bf16 needs no loss
#: scaling, and a disabled scaler reads nothing back from the GPU, where
#: MMEngine's default dynamic scaler reads its overflow flag every step.
AMP = {
    'float16': dict(dtype='float16', loss_scale='dynamic'),
    'bfloat16': dict(dtype='bfloat16', loss_scale=dict(enabled=False)),
}

#: Data preprocessors that move a batch in one copy of the images and one
#: of the labels.
BATCHED = ('SPMLDataPreprocessor', 'MultiViewDataPreprocessor')


def apply_gpu_fast(cfg: Config) -> Config:
    """The config with the switches of its ``gpu_fast`` dict applied.

    Switches (missing ones take :data:`GPU_FAST_DEFAULTS`; False, None or 0
    leaves that part of the config as it is):

    - ``channels_last`` (bool): the model in channels-last memory format
      (:class:`SPMLGPUFastRunner`, before it is wrapped) and, with
      ``SPMLDataPreprocessor``, the input batch too
      (``data_preprocessor.channels_last``; otherwise the first convolution
      converts it).
    - ``cudnn_benchmark`` (bool): ``env_cfg.cudnn_benchmark``, cuDNN's
      autotuner (one search per input shape).
    - ``amp`` (str): ``'bfloat16'`` or ``'float16'``: ``AmpOptimWrapper``
      in that precision (:data:`AMP`).
    - ``batched_copy`` (bool): ``SPMLDataPreprocessor`` (kept if the config
      has ``MultiViewDataPreprocessor``), ``default_collate`` in the
      training loader, so that workers stack the images, and
      ``pin_memory``: the batch reaches the GPU in one non-blocking copy of
      its images and one of its labels.
    - ``num_workers`` (int), ``prefetch_factor`` (int): the training
      loader's, with persistent workers.
    - ``compile`` (bool | dict): MMEngine's ``compile`` of the train step.
    - ``image_cache`` (str): an image cache of the config's images
      (``tools/cache_images.py``): every loader reads the decoded uint8
      images in place of decoding files (``LoadCachedImage``), the same
      batches.
    - ``device_flip`` (bool): the training pipeline's horizontal
      ``RandomFlip``, its last random step, moved onto the device
      (``SPMLDataPreprocessor.flip_prob``): each image mirrored with the
      same probability, from the device's random numbers instead of the
      workers'.

    Args:
        cfg (Config): A config with a ``gpu_fast`` dict.

    Returns:
        Config: A copy with the switches applied.
    """
    cfg = copy.deepcopy(cfg)
    switches = dict(GPU_FAST_DEFAULTS, **cfg.get('gpu_fast', {}))
    unknown = set(switches) - set(GPU_FAST_DEFAULTS)
    if unknown:
        raise ValueError(f'gpu_fast: unknown switches {sorted(unknown)}; '
                         f'known: {sorted(GPU_FAST_DEFAULTS)}')
    preprocessor = cfg.setdefault('data_preprocessor', ConfigDict())
    loader = cfg.train_dataloader
    if switches['batched_copy']:
        kind = preprocessor.get('type', 'ClsDataPreprocessor')
        if kind not in BATCHED:
            if kind.split('.')[-1] != 'ClsDataPreprocessor':
                raise ValueError(
                    f'gpu_fast.batched_copy replaces ClsDataPreprocessor by '
                    f'SPMLDataPreprocessor, not {kind}; set '
                    'gpu_fast.batched_copy=False to keep it')
            preprocessor.type = 'SPMLDataPreprocessor'
        loader.collate_fn = dict(type='default_collate')
        loader.pin_memory = True
    if switches['channels_last'] and preprocessor.get('type') in BATCHED:
        preprocessor.channels_last = True
    if switches['cudnn_benchmark']:
        cfg.setdefault('env_cfg', ConfigDict()).cudnn_benchmark = True
    if switches['amp']:
        if switches['amp'] not in AMP:
            raise ValueError(f'gpu_fast.amp must be one of {list(AMP)} or '
                             f"None, got {switches['amp']!r}")
        cfg.optim_wrapper.update(type='AmpOptimWrapper',
                                 **AMP[switches['amp']])
    if switches['num_workers']:
        loader.update(num_workers=switches['num_workers'],
                      persistent_workers=True)
        if switches['prefetch_factor']:
            loader.prefetch_factor = switches['prefetch_factor']
    if switches['compile']:
        cfg.compile = switches['compile']
    if switches['image_cache']:
        with_image_cache(cfg, switches['image_cache'])
    if switches['device_flip']:
        _flip_on_device(loader.dataset, preprocessor)
    cfg.gpu_fast = switches
    return cfg


def _flip_on_device(dataset: ConfigDict, preprocessor: ConfigDict) -> None:
    """Move the training pipeline's ``RandomFlip`` into the data
    preprocessor (``gpu_fast.device_flip``): only a horizontal flip with a
    probability, followed by nothing but ``PackInputs``, so that mirroring
    the packed batch draws the same distribution."""
    refuse = 'gpu_fast.device_flip moves the training pipeline\'s RandomFlip '
    if preprocessor.get('type') != 'SPMLDataPreprocessor':
        raise ValueError(refuse + 'into SPMLDataPreprocessor, not '
                         f'{preprocessor.get("type")}; set '
                         'gpu_fast.device_flip=False')
    pipeline = list(dataset.get('pipeline') or [])
    found = [i for i, step in enumerate(pipeline)
             if step.get('type') == 'RandomFlip']
    if len(found) != 1:
        raise ValueError(refuse + f'onto the device; train_dataloader.dataset'
                         f'.pipeline has {len(found)}')
    flip = pipeline[found[0]]
    after = [step.get('type') for step in pipeline[found[0] + 1:]]
    if flip.get('direction', 'horizontal') != 'horizontal' or not isinstance(
            flip.get('prob'), (int, float)) or after != ['PackInputs']:
        raise ValueError(
            refuse + 'onto the device when it mirrors left to right with '
            'one probability and only PackInputs follows it; this pipeline '
            f'has {dict(flip)} followed by {after}: set '
            'gpu_fast.device_flip=False')
    preprocessor.flip_prob = float(flip['prob'])
    dataset.pipeline = pipeline[:found[0]] + pipeline[found[0] + 1:]


def refuse_without_cuda(cfg: Config) -> None:
    """Stop before any work when the GPU fast recipe meets a machine
    without CUDA, naming the keys that select it and what to set.

    The recipe is refused on the CPU whatever its switches: its AMP
    precisions need CUDA (MMEngine's ``AmpOptimWrapper``), and with
    ``gpu_fast.amp=None`` the rest (channels-last, cuDNN autotuning, pinned
    memory, eight persistent workers) is tuned for a GPU and gains nothing
    on a CPU, so a run that chose the recipe is not silently trained
    without it.
    """
    if is_cuda_available():
        return
    switches = dict(GPU_FAST_DEFAULTS, **cfg.get('gpu_fast', {}))
    raise RuntimeError(
        f"runner_type='{cfg.get('runner_type', 'SPMLGPUFastRunner')}' is the "
        'GPU fast recipe (configs/_base_/runtime_gpu_fast.py: '
        f"gpu_fast.amp={switches['amp']!r}, channels_last, cudnn_benchmark,"
        ' batched_copy, num_workers), which needs a CUDA GPU, and this '
        'machine has none. To train on the CPU, remove '
        "'spml_mm::_base_/runtime_gpu_fast.py' from the config's _base_ or "
        'pass --cfg-options runner_type=Runner (the plain runner ignores '
        'gpu_fast).')


@RUNNERS.register_module()
class SPMLGPUFastRunner(Runner):
    """MMEngine's ``Runner`` with the GPU fast recipe of the config's
    ``gpu_fast`` switches (:func:`apply_gpu_fast`).

    Selected by ``runner_type='SPMLGPUFastRunner'``, which
    ``configs/_base_/runtime_gpu_fast.py`` sets: ``tools/train.py``,
    ``tools/test.py`` and MMPretrain's own tools build the runner of
    ``runner_type`` from MMEngine's root ``RUNNERS`` registry, where this
    class is registered (every scope's registry finds it there). The model
    is converted to the channels-last memory format before it is wrapped
    for distributed training, so the gradient buckets take that layout.

    On a machine without CUDA the runner is refused before anything is
    built (:func:`refuse_without_cuda`); train there with
    ``runner_type='Runner'``.

    Example:
        >>> _base_ = ['spml_mm::an/resnet50_voc.py',
        ...           'spml_mm::_base_/runtime_gpu_fast.py']
        >>> gpu_fast = dict(amp='float16', compile=True)
    """

    @classmethod
    def check_machine(cls, cfg: Config) -> None:
        """What ``tools/train.py`` asks of the runner class before any
        other check (:func:`refuse_without_cuda`)."""
        refuse_without_cuda(cfg)

    @classmethod
    def from_cfg(cls, cfg: Config) -> Runner:
        cls.check_machine(cfg)
        return super().from_cfg(apply_gpu_fast(cfg))

    def wrap_model(self, model_wrapper_cfg, model):
        if self.cfg.gpu_fast['channels_last']:
            model = model.to(memory_format=torch.channels_last)
        return super().wrap_model(model_wrapper_cfg, model)
