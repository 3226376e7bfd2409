"""Decode every image of a config's datasets once into an image cache.

Runs the training pipeline's leading deterministic steps
(``LoadImageFromFile`` and any ``Resize`` right after it) on every image of
the train, val and test loaders and writes the results to a memory-mapped
``.npy`` and its index ``.json`` (``spml_mm.datasets.image_cache``). The
config's pipelines then start with ``LoadCachedImage`` in place of those
steps: the same batches, without decoding files. Prints how to use it.

Example:
    python tools/cache_images.py configs/an/efficientnet-lite0_proxy-voc.py
    # writes <data_root>/image_cache/<key of the image list and steps>.npy
    python tools/train.py configs/an/efficientnet-lite0_proxy-voc.py \\
        --cfg-options <the options it prints>

``--out`` must end with ``.npy`` and replaces an existing file only when it
is an image cache (its index ``.json`` beside it) or with ``--overwrite``.
"""
import argparse
import json
import os.path as osp
import time

from mmengine.config import Config
from mmengine.registry import init_default_scope

from spml_mm.utils import add_cfg_options, check_output_file


def is_image_cache(path: str) -> bool:
    """Whether ``path`` is an image cache this tool wrote (its index json
    beside it)."""
    with open(osp.splitext(path)[0] + '.json') as f:
        index = json.load(f)
    return {'steps', 'rows'} <= set(index)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='a config that trains on the images')
    parser.add_argument('--out', default=None,
                        help='the cache .npy (default: '
                        '<data_root>/image_cache/<key>.npy, the key a hash '
                        'of the image list and the cached steps)')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an existing --out that is not an '
                        'image cache')
    add_cfg_options(parser, 'train_dataloader.dataset.data_root=data/voc')
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    init_default_scope('mmpretrain')
    from spml_mm.datasets.image_cache import (LOADERS, build_image_cache,
                                              cache_options, cached_steps,
                                              config_image_paths,
                                              default_cache_file)
    steps = cached_steps(cfg.train_dataloader.dataset.pipeline)
    for loader in LOADERS[1:]:
        other = cached_steps(cfg[loader].dataset.pipeline)
        if other != steps:
            parser.error(f'{loader} starts with {other}, the training '
                         f'pipeline with {steps}: one cache holds one set of '
                         'steps')
    start = time.time()
    paths = config_image_paths(cfg)
    out = args.out or default_cache_file(
        paths, steps, cfg.train_dataloader.dataset.data_root)
    try:
        replacing = check_output_file(out, ('.npy', ), [args.config],
                                      is_image_cache, args.overwrite)
    except ValueError as err:
        parser.error(str(err))
    if replacing:
        print(replacing)
    build_image_cache(paths, steps, out)
    print(f'\n{len(paths)} images in {time.time() - start:.0f} s to {out}')
    print('with the GPU fast recipe: --cfg-options '
          f'gpu_fast.image_cache={out}')
    if len(steps) == 1:
        print('use it with --cfg-options ' + ' '.join(cache_options(out)))
    else:
        print('use it: replace the pipelines\' first '
              f'{len(steps)} steps by dict(type=\'LoadCachedImage\', '
              f'cache_file={out!r}, steps={steps})')


if __name__ == '__main__':
    main()
