"""Cache a frozen backbone's features of every image of a config's dataset.

Runs the config's backbone and neck (with their pretrained weights, in eval
mode) over the images of the train, val and test splits through the test
pipeline, and writes each image's features and those of its mirror image to
one ``.npz`` (``spml_mm.datasets.feature_cache``). Configs of the linear
regime read it with ``LoadCachedFeatures`` and train only the classifier.

Example:
    python tools/cache_features.py configs/an/efficientnet-lite0_proxy-voc.py
    # writes the config's feature_cache file, or --out FILE

``--out`` is never the config, and replaces an existing file only when it
is a feature cache or with ``--overwrite``; it is written atomically.
"""
import argparse
import time

import numpy as np
import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import init_default_scope
from mmengine.utils import ProgressBar

from spml_mm.utils import (add_cfg_options, atomic_output,
                           check_output_file)


@torch.no_grad()
def extract(cfg: Config, paths: list, batch_size: int,
            mirror: bool = True) -> tuple:
    """Features of each image and of its mirror image (None without
    ``mirror``), (N, D) each."""
    from mmcv.transforms import Compose
    from mmpretrain.registry import MODELS
    model_cfg = cfg.model.copy()
    model_cfg.setdefault('data_preprocessor', cfg.get('data_preprocessor'))
    model = MODELS.build(model_cfg)
    model.init_weights()
    model.eval()
    pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    features, flipped = [], []
    progress = ProgressBar(len(paths))
    for start in range(0, len(paths), batch_size):
        batch = pseudo_collate([
            pipeline(dict(img_path=path, sample_idx=start + i))
            for i, path in enumerate(paths[start:start + batch_size])
        ])
        inputs = model.data_preprocessor(batch, False)['inputs']
        features.append(model.extract_feat(inputs)[-1].numpy())
        if mirror:
            flipped.append(model.extract_feat(inputs.flip(-1))[-1].numpy())
        for _ in range(len(batch['inputs'])):
            progress.update()
    print()
    return np.concatenate(features), (np.concatenate(flipped)
                                      if mirror else None)


def is_feature_cache(path: str) -> bool:
    """Whether ``path`` is a feature cache this tool wrote."""
    with np.load(path, allow_pickle=False) as found:
        return {'images', 'features'} <= set(found.files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='a config that trains on the images')
    parser.add_argument('--out', default=None,
                        help="defaults to the config's feature_cache")
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out that is not a '
                        'feature cache')
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--threads', type=int, default=None,
                        help='torch CPU threads (default: torch decides)')
    add_cfg_options(parser, 'train_dataloader.dataset.data_root=data/voc')
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    out = args.out or cfg.get('feature_cache')
    if out is None:
        parser.error('the config names no feature_cache: give --out')
    try:
        replacing = check_output_file(out, ('.npz', ), [args.config],
                                      is_feature_cache, args.overwrite)
    except ValueError as err:
        parser.error(str(err))
    init_default_scope('mmpretrain')
    import spml_mm  # noqa: F401  (registers the SPML datasets and heads)
    start = time.time()
    from spml_mm.datasets.image_cache import config_image_paths
    paths = config_image_paths(cfg)
    features, flipped = extract(cfg, paths, args.batch_size)
    if replacing:
        print(replacing)
    with atomic_output(out) as partial:
        with open(partial, 'wb') as f:
            np.savez(f, images=np.array(paths),
                     features=features.astype(np.float16),
                     features_flipped=flipped.astype(np.float16))
    print(f'{len(paths)} images x {features.shape[1]} features (and their '
          f'mirror images) in {time.time() - start:.0f} s to {out}')


if __name__ == '__main__':
    main()
