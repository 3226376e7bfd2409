"""Export a trained SPML model with its label-set decision to ONNX.

    python tools/export_onnx.py CONFIG CHECKPOINT --out model.onnx

The graph takes a float batch ``images`` (N, 3, H, W) as the config's test
pipeline gives them (values 0-255, channels as loaded) and returns
``scores`` (N, C, the raw sigmoid scores) and ``labels`` (N, C, bool): the
normalisation, the network and the decision (the one
``spml_mm.apis.resolve_decision`` finds: ``--thresholds FILE``, else the one
recorded in the checkpoint by ``tools/calibrate.py``, else a file beside it,
else the head's ``thr``) are all inside.
H and W are those of the test split's first image after the pipeline. The
export is then checked with ONNX Runtime on ``--verify`` test images: the
label sets must equal PyTorch's (exit status 1 if not). A decision
calibrated for another model is refused (``--allow-other-thresholds``
applies it anyway, saying so), as is a checkpoint that does not fit the
config. ``--out`` must end with ``.onnx``, is never one of the run's
inputs, and replaces an existing file only when this tool exported it or
with ``--overwrite``; it is written atomically.
"""
import argparse
import sys

import numpy as np
import torch
from mmengine.config import Config

from spml_mm.apis import (export_onnx, load_model, resolve_decision,
                          split_loader)
from spml_mm.apis.export import LabelSetModel, exported_by_spml_mm
from spml_mm.apis.model import check_fit
from spml_mm.apis.thresholds import THRESHOLDS_HELP, decision_file
from spml_mm.utils import (DamagedCheckpointError, add_cfg_options,
                           atomic_output, check_output_file,
                           load_checkpoint_safely)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--out', required=True,
                        help='the .onnx file; never an input, nor an '
                        'existing file this tool did not export unless '
                        '--overwrite')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out this tool did not '
                        'export')
    parser.add_argument(
        '--thresholds', default='auto', help=THRESHOLDS_HELP)
    parser.add_argument(
        '--allow-other-thresholds', action='store_true',
        help='decide by a thresholds file calibrated for other weights or '
        'another config (refused otherwise), with a warning')
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
    thresholds = decision_file(args.checkpoint, args.thresholds)
    try:
        replacing = check_output_file(
            args.out, ('.onnx', ),
            [args.config, args.checkpoint, thresholds], exported_by_spml_mm,
            args.overwrite)
        checkpoint = load_checkpoint_safely(args.checkpoint,
                                            map_location='cpu')
        check_fit(cfg, checkpoint, args.checkpoint)
        decision = resolve_decision(cfg, checkpoint, args.thresholds,
                                    args.allow_other_thresholds,
                                    args.cfg_options,
                                    filename=args.checkpoint)
        model = load_model(cfg, checkpoint, 'cpu', filename=args.checkpoint)
    except (ValueError, DamagedCheckpointError) as err:
        sys.exit(str(err))
    del checkpoint
    for line in decision['warnings']:
        print(line)
    print(f'decision: {decision["line"]}')
    images = test_images(cfg, max(args.verify, 1))
    if replacing:
        print(replacing)
    with atomic_output(args.out) as partial:
        export_onnx(model, partial, images.shape)
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
