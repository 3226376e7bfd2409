from typing import List

import torch
from mmpretrain.models import ClsDataPreprocessor
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ...utils import to_device

#: The label index fields of a sample that move with the batch: the
#: observed positives and, for partial labels, negatives.
LABEL_FIELDS = ('gt_label', 'gt_label_neg')


@MODELS.register_module()
class SPMLDataPreprocessor(ClsDataPreprocessor):
    """``ClsDataPreprocessor`` that moves a batch in one copy of its images
    and one of its labels, neither of which makes the host wait.

    MMPretrain's preprocessor moves each image of a batch collated by
    MMEngine's default ``pseudo_collate`` on its own: B copies, each of
    which, from pageable memory, blocks the host until the GPU has done it.
    This one stacks the images on the host (when they share a shape, as
    training crops do), concatenates the samples' label indices
    (``gt_label`` and ``gt_label_neg``), each into pinned memory when the
    model is on a GPU, and moves each with one non-blocking copy; every
    sample then holds views of the moved labels. Normalisation, padding and
    batch augmentations are ``ClsDataPreprocessor``'s, with the same
    results.

    In a compiled train step (MMEngine's ``compile``) it runs eagerly
    (``torch.compiler.disable``): its work is the host's, and a graph fed
    with host tensors is never captured in CUDA graphs, while the model's
    graphs start from the moved batch.

    Args:
        mean (Sequence[Number], optional): Pixel mean per channel.
            Defaults to None.
        std (Sequence[Number], optional): Pixel standard deviation per
            channel. Defaults to None.
        pad_size_divisor (int): Pad the images to a multiple of this.
            Defaults to 1.
        pad_value (Number): Padded pixel value. Defaults to 0.
        to_rgb (bool): Convert BGR to RGB. Defaults to False.
        to_onehot (bool): Also set one-hot ``gt_score``. Defaults to False.
        num_classes (int, optional): Number of classes. Defaults to None.
        batch_augments (dict, optional): Batch augmentations, as in
            ``ClsDataPreprocessor``. Defaults to None.
        channels_last (bool): Give the batch the channels-last memory
            format, for a model in channels-last (``SPMLGPUFastRunner``
            converts it); converted on the device while still uint8, the
            cheapest point, and normalisation keeps the format. Defaults to
            False.
        flip_prob (float): In training, mirror each image of the moved
            batch left to right with this probability, on the device: the
            training pipeline's ``RandomFlip`` moved off the loader
            (``gpu_fast.device_flip``), the same distribution from the
            device's random numbers. Defaults to 0.

    Example:
        >>> data_preprocessor = dict(type='SPMLDataPreprocessor',
        ...                          mean=[123.675, 116.28, 103.53],
        ...                          std=[58.395, 57.12, 57.375], to_rgb=True)
    """

    def __init__(self,
                 *args,
                 channels_last: bool = False,
                 flip_prob: float = 0.,
                 **kwargs):
        super().__init__(*args, **kwargs)
        if not 0 <= flip_prob <= 1:
            raise ValueError(f'flip_prob must be in [0, 1], got {flip_prob}')
        self.channels_last = channels_last
        self.flip_prob = flip_prob

    def _stack(self, images: List[torch.Tensor]) -> torch.Tensor:
        """The images stacked, on the host straight into pinned memory when
        the model is on a GPU (one host copy instead of two)."""
        first = images[0]
        if self.device.type != 'cuda' or first.device.type != 'cpu' or any(
                image.requires_grad for image in images):
            return torch.stack(images)
        return torch.stack(
            images,
            out=torch.empty((len(images), ) + first.shape, dtype=first.dtype,
                            pin_memory=True))

    def _move_labels(self, data_samples: List[DataSample]) -> None:
        fields = [k for k in LABEL_FIELDS if k in data_samples[0]]
        indices = [
            torch.as_tensor(sample.get(k), dtype=torch.long).view(-1)
            for k in fields for sample in data_samples
        ]
        if not indices or any(index.device.type != 'cpu'
                              for index in indices):
            return
        flat = to_device(torch.cat(indices), self.device)
        views = iter(flat.split([len(index) for index in indices]))
        for k in fields:
            for sample in data_samples:
                sample.set_field(next(views), k)

    def _flip(self, inputs: torch.Tensor) -> torch.Tensor:
        """Each image (N x C x H x W) mirrored with ``flip_prob``."""
        flip = torch.rand(len(inputs), device=inputs.device) < self.flip_prob
        return torch.where(flip.view(-1, 1, 1, 1), inputs.flip(-1), inputs)

    @torch.compiler.disable
    def forward(self, data: dict, training: bool = False) -> dict:
        inputs = data['inputs']
        if isinstance(inputs, (list, tuple)) and inputs and len(
                {tuple(image.shape) for image in inputs}) == 1:
            inputs = self._stack(list(inputs))
        if isinstance(inputs, torch.Tensor):
            inputs = to_device(inputs, self.device)
            if training and self.flip_prob:
                inputs = self._flip(inputs)
            if self.channels_last and inputs.dim() == 4:
                inputs = inputs.contiguous(memory_format=torch.channels_last)
        elif training and self.flip_prob:
            raise ValueError(
                'SPMLDataPreprocessor.flip_prob mirrors a batch of images of '
                'one shape; this batch\'s images differ in shape: resize '
                'them to one size in the training pipeline, or move the '
                'RandomFlip back there (gpu_fast.device_flip=False)')
        data_samples = data.get('data_samples')
        if data_samples and isinstance(data_samples[0], DataSample):
            self._move_labels(data_samples)
        return super().forward(dict(data, inputs=inputs), training)
