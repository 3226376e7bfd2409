"""Write an official dataset in the interchange format.

The engine of ``tools/prepare_spml.py``: parse both official splits, confirm
every kept image exists (and decodes, on request), write
``formatted_{train,val}_{images,labels,labels_obs}.npy`` and ``classes.txt``,
and link ``images`` to the image folder so that the configs' ``data_prefix``
finds the images. docs/methods/protocol.md ("Datasets and observed labels") describes
the format and the rules each dataset follows.
"""
import os
import os.path as osp
from typing import Callable, Dict, List

import numpy as np
from mmengine.utils import ProgressBar
from PIL import Image

from .coco import load_coco_split
from .cub import load_cub_split
from .layout import ParsedSplit
from .nuswide import load_nuswide_split
from .protocol import observe_uniform, split_train_val
from .voc import load_voc_split

#: Reader of each official layout: ``parse(root, split) -> ParsedSplit``.
OFFICIAL_PARSERS: Dict[str, Callable[[str, str], ParsedSplit]] = dict(
    voc=load_voc_split,
    coco=load_coco_split,
    nuswide=load_nuswide_split,
    cub=load_cub_split)

#: Name of the link to the image folder inside the output folder.
IMAGE_LINK = 'images'


def check_image(path: str) -> None:
    """Decode ``path`` completely; fail naming it when it cannot be read."""
    try:
        with Image.open(path) as image:
            image.load()
    except Exception as exc:
        raise ValueError(f'unreadable image {path}: {exc}') from exc


def _link_images(out_dir: str, target: str) -> str:
    """Point ``out_dir/images`` at ``target``; leave an existing entry."""
    link = osp.join(out_dir, IMAGE_LINK)
    if osp.lexists(link):
        if osp.realpath(link) == osp.realpath(target):
            return f'{link} -> {target} (kept)'
        return (f'{link} exists and does not point at {target}; left as is, '
                'set data_prefix to the image folder if it is not there')
    os.symlink(target, link)
    return f'{link} -> {target}'


def prepare_official(dataset: str,
                     data_root: str,
                     out_dir: str,
                     seed: int = 1200,
                     check_images: bool = False) -> dict:
    """Convert an official dataset into the interchange format.

    Observed labels come from :func:`observe_uniform` on each official split
    with ``seed``; everything else is independent of it. Writing the same
    input twice gives byte-identical files.

    Args:
        dataset (str): One of :data:`OFFICIAL_PARSERS`.
        data_root (str): The official download (layout in the error messages
            and docs/user_guides/datasets.md).
        out_dir (str): Output folder (created).
        seed (int): Seed of the observed labels. Defaults to 1200.
        check_images (bool): Decode every kept image and fail naming the
            first that cannot be read. Defaults to False (only existence is
            checked).

    Returns:
        dict: ``classes``, ``link`` and per official split a row of
        ``listed``, ``kept``, ``dropped``, ``positives`` (average per image)
        and ``protocol`` (the protocol splits it yields).
    """
    if dataset not in OFFICIAL_PARSERS:
        raise ValueError(f'dataset must be one of {sorted(OFFICIAL_PARSERS)},'
                         f' got {dataset!r}')
    parse = OFFICIAL_PARSERS[dataset]
    parsed = {split: parse(data_root, split) for split in ('train', 'val')}
    train, val = parsed['train'], parsed['val']
    if train.classes != val.classes:
        raise ValueError(
            f'{dataset}: the official train and val splits of {data_root} '
            f'name different classes ({len(train.classes)} vs '
            f'{len(val.classes)}); both splits must come from one release.')
    for split, part in parsed.items():
        if len(part.images) == 0:
            raise ValueError(
                f'{dataset}: no image of the official {split} split of '
                f'{data_root} was kept (dropped: {part.dropped}).')

    progress = ProgressBar(len(train.images) + len(val.images))
    for part in parsed.values():
        for path in part.images:
            full = osp.join(data_root, part.image_dir, path)
            if not osp.isfile(full):
                raise FileNotFoundError(
                    f'{dataset}: image {full} of the annotations is missing; '
                    'extract the complete image archive.')
            if check_images:
                check_image(full)
            progress.update()
    print()

    os.makedirs(out_dir, exist_ok=True)
    summary = dict(classes=len(train.classes))
    for split, part in parsed.items():
        observed = observe_uniform(part.labels, seed=seed)
        for name, array in (('images', part.images), ('labels', part.labels),
                            ('labels_obs', observed)):
            np.save(osp.join(out_dir, f'formatted_{split}_{name}.npy'), array)
        summary[split] = dict(
            listed=len(part.images) + sum(part.dropped.values()),
            kept=len(part.images),
            dropped=dict(part.dropped),
            positives=float(part.labels.sum(1).mean()))
    train_idx, val_idx = split_train_val(len(train.images))
    summary['train']['protocol'] = (f'train {len(train_idx)}, '
                                    f'val {len(val_idx)}')
    summary['val']['protocol'] = f'test {len(val.images)}'
    with open(osp.join(out_dir, 'classes.txt'), 'w') as f:
        f.write(''.join(f'{name}\n' for name in train.classes))
    summary['link'] = _link_images(
        out_dir, osp.abspath(osp.join(data_root, train.image_dir)))
    return summary


def format_summary(dataset: str, summary: dict) -> str:
    """The summary of :func:`prepare_official` as a text table."""
    header = ('official split', 'listed', 'kept', 'dropped',
              'positives/image', 'protocol splits')
    rows = [header]
    for split in ('train', 'val'):
        info = summary[split]
        dropped = ', '.join(f'{n} {reason}'
                            for reason, n in info['dropped'].items()
                            if n) or '0'
        rows.append((split, str(info['listed']), str(info['kept']), dropped,
                     f'{info["positives"]:.2f}', info['protocol']))
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    lines: List[str] = [
        f'{dataset}: {summary["classes"]} classes; images: {summary["link"]}'
    ]
    for row in rows:
        lines.append('  '.join(cell.ljust(w)
                               for cell, w in zip(row, widths)).rstrip())
    return '\n'.join(lines)
