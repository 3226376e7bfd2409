"""Export a trained SPML model with its label-set decision to ONNX.

    python tools/export_onnx.py CONFIG CHECKPOINT --out model.onnx

The graph takes a float batch ``images`` (N, 3, H, W) as the config's test
pipeline gives them (values 0-255, channels as loaded) and returns
``scores`` (N, C, the raw sigmoid scores) and ``labels`` (N, C, bool): the
normalisation, the network and the decision (the thresholds file beside the
checkpoint, ``--thresholds FILE``, or the head's ``thr``) are all inside.
H and W are those of the test split's first image after the pipeline. The
export is then checked with ONNX Runtime on ``--verify`` test images: the
label sets must equal PyTorch's (exit status 1 if not).
"""
import argparse
import os.path as osp
import sys

import numpy as np
import torch
from mmengine.config import Config

from spml_mm.apis import (apply_thresholds, checkpoint_classes,
                          default_thresholds_path, export_onnx, load_model,
                          split_loader)
from spml_mm.apis.export import LabelSetModel
from spml_mm.utils import add_cfg_options


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--out', required=True, help='the .onnx file')
    parser.add_argument(
        '--thresholds', default='auto',
        help='thresholds file of tools/calibrate.py, or "none" (default: '
        'the one beside the checkpoint, if any)')
    parser.add_argument('--verify', type=int, default=64,
                        help='test images to compare ONNX Runtime with '
                        'PyTorch on (0: none; default 64)')
    add_cfg_options(parser, 'test_dataloader.dataset.data_root=data/demo')
    return parser.parse_args(argv)


def test_images(cfg: Config, num: int) -> torch.Tensor:
    """The first ``num`` test images after the test pipeline, as floats."""
    dataset = split_loader(cfg, 'test').dataset
    return torch.stack([dataset[i]['inputs'] for i in range(
        min(num, len(dataset)))]).float()


def main(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    thresholds = args.thresholds
    if thresholds == 'auto':
        found = default_thresholds_path(args.checkpoint)
        thresholds = found if osp.isfile(found) else 'none'
    if thresholds != 'none':
        classes = checkpoint_classes(args.checkpoint,
                                     cfg.model.head.num_classes)
        try:
            apply_thresholds(cfg, thresholds, classes, args.checkpoint)
        except ValueError as err:
            sys.exit(str(err))
        print(f'decision: {thresholds}')
    model = load_model(cfg, args.checkpoint, 'cpu')
    images = test_images(cfg, max(args.verify, 1))
    export_onnx(model, args.out, images.shape)
    shape = ' x '.join(map(str, images.shape[1:]))
    print(f'wrote {args.out} (input images: N x {shape})')
    if args.verify:
        import onnxruntime
        session = onnxruntime.InferenceSession(
            args.out, providers=['CPUExecutionProvider'])
        scores, labels = session.run(None, {'images': images.numpy()})
        with torch.no_grad():
            ref_scores, ref_labels = LabelSetModel(model)(images)
        same = (labels == ref_labels.numpy()).all(1)
        print(f'ONNX Runtime against PyTorch on {len(images)} test images: '
              f'{same.sum()} label sets equal, largest score difference '
              f'{np.abs(scores - ref_scores.numpy()).max():.2e}')
        if not same.all():
            sys.exit(1)


if __name__ == '__main__':
    main()
