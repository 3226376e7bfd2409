"""How linearly a frozen backbone's features separate a dataset's classes.

Extracts the pooled features of a config's backbone (with its pretrained
weights, in eval mode) for the official train and test images of a dataset
folder in the interchange format, fits a linear classifier with BCE on the
full labels and on the observed single positives (AN), and prints the test
mAP after each of ``--epochs``: the ceiling of the linear regime and its
AN-to-full gap, in minutes on a reduced proxy. ``--record FILE`` merges the
test mAPs into FILE under the data folder's name, with the command (the
documentation's ``docs/results/linear_probe.json``).

Example:
    python tools/make_proxy_data.py --like voc --fraction 0.2 \\
        --out-dir data/proxy-voc-f0.2
    PYTHONPATH=.dev_scripts python -m analysis.linear_probe \\
        configs/an/efficientnet-lite0_proxy-voc.py data/proxy-voc-f0.2
"""
import argparse
import json
import os.path as osp
import sys

import numpy as np
import torch
import torch.nn.functional as F
from mmengine.config import Config
from mmengine.registry import init_default_scope

from tools.cache_features import extract


def probe(x: torch.Tensor, target: torch.Tensor, x_test: torch.Tensor,
          y_test: torch.Tensor, epochs: list, lr: float,
          batch_size: int) -> dict:
    """Test mAP of a linear BCE classifier after each of ``epochs``."""
    from mmpretrain.evaluation import AveragePrecision
    torch.manual_seed(0)
    linear = torch.nn.Linear(x.size(1), target.size(1))
    optimizer = torch.optim.Adam(linear.parameters(), lr)
    maps = {}
    for epoch in range(1, max(epochs) + 1):
        for batch in torch.randperm(len(x)).split(batch_size):
            loss = F.binary_cross_entropy_with_logits(
                linear(x[batch]), target[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch in epochs:
            with torch.no_grad():
                maps[epoch] = float(
                    AveragePrecision.calculate(linear(x_test), y_test))
    return maps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='a config that trains on the images')
    parser.add_argument('data_root', help='a folder in the interchange '
                        'format (formatted_{train,val}_*.npy, images/)')
    parser.add_argument('--epochs', nargs='+', type=int,
                        default=[5, 10, 20, 40])
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--record', default=None, metavar='FILE',
                        help='merge the test mAPs into this json too, under '
                        "the data folder's name")
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    init_default_scope('mmpretrain')
    import spml_mm  # noqa: F401  (registers the SPML heads)

    def load(split, name):
        return np.load(osp.join(args.data_root, f'formatted_{split}_{name}'
                                '.npy'))

    x, x_test = (torch.from_numpy(extract(cfg, [
        osp.join(args.data_root, 'images', p) for p in load(split, 'images')
    ], 64, mirror=False)[0]) for split in ('train', 'val'))
    y_test = torch.from_numpy(load('val', 'labels')).float()
    targets = dict(full=load('train', 'labels'),
                   AN=load('train', 'labels_obs').clip(min=0))
    print(f'{len(x)} training and {len(x_test)} test images, '
          f'{x.size(1)} features; test mAP (%) after epoch')
    found = dict(train_images=len(x), test_images=len(x_test), lr=args.lr,
                 batch_size=args.batch_size,
                 command=' '.join(['PYTHONPATH=.dev_scripts',
                                   'python -m analysis.linear_probe',
                                   *sys.argv[1:]]))
    for name, target in targets.items():
        maps = probe(x, torch.from_numpy(target).float(), x_test, y_test,
                     args.epochs, args.lr, args.batch_size)
        print(f'{name:5s}' + ''.join(f'  {e}: {m:.2f}'
                                     for e, m in maps.items()))
        found[name] = {str(e): m for e, m in maps.items()}
    if args.record:
        recorded = {}
        if osp.isfile(args.record):
            with open(args.record) as f:
                recorded = json.load(f)
        recorded[osp.basename(osp.normpath(args.data_root))] = found
        with open(args.record, 'w') as f:
            json.dump(recorded, f, indent=1, sort_keys=True)
            f.write('\n')


if __name__ == '__main__':
    main()
