"""Write the teacher scores of a training config's images for its classes.

    # CLIP ViT-B/16 of MMPretrain's model zoo on whole images and 4 x 4
    # crops (AEVLP), written where the config's label bank reads them
    python tools/score_teacher.py configs/aevlp/resnet50_voc.py \\
        --source clip --checkpoint checkpoints/clip-vit-base-p16_openai.pth \\
        --crops 4
    # any MMPretrain classifier (sigmoid of a multi-label head, softmax of a
    # single-label one)
    python tools/score_teacher.py configs/vlpl/resnet50_voc.py \\
        --source model --teacher-config TEACHER_CONFIG --checkpoint T.pth
    # scores of your own tagger: npz (scores, img_paths[, classes]), csv
    # (a header row, then the image path and one score per class on each
    # row) or npy with --img-paths
    python tools/score_teacher.py configs/vlpl/resnet50_voc.py \\
        --source file --scores mine.csv

CONFIG is the training config: its training dataset says which images and
classes are scored, and its ``model.head.label_bank.score_file`` where the
scores go (``--out`` elsewhere). The file written
(``spml_mm.datasets.teacher_scores``) records what produced it and a
fingerprint of each image file; a later run with the same ``--out`` reuses
it when it was made by the same teacher for the same images, image files
and classes, and refuses it otherwise (``--overwrite`` replaces it).
Scoring saves its progress to ``OUT.partial.npz`` every ``--save-every``
images and on interruption, and an identical run picks it up.
"""
import argparse
import csv
import json
import os
import os.path as osp
import shlex
import sys
from typing import List, Optional, Tuple

import numpy as np
from mmengine.config import Config

import spml_mm  # noqa: F401  (registries, the spml_mm:: scheme)
from spml_mm.datasets.teacher_scores import (TeacherScoreError,
                                             dataset_classes,
                                             dataset_image_paths,
                                             describe_dataset, file_sha256,
                                             image_fingerprints,
                                             read_teacher_scores,
                                             save_teacher_scores,
                                             teacher_rows)
from spml_mm.teacher.scorer import (DEFAULT_PROMPTS, RAM_NOT_YET,
                                    TeacherUnavailableError, build_teacher,
                                    load_teacher_config)
from spml_mm.teacher.scoring import (identity_differences, paths_sha256,
                                     run_identity, score_images)
from spml_mm.utils import (ConfigOptionsAction, OutputFileError,
                           add_cfg_options, check_output_file)

SOURCES = ('file', 'model', 'clip', 'ram')
#: identity keys of the images scored: a file of a superset of the images
#: is reused for the subset, its rows checked image by image
IMAGE_KEYS = ('num_images', 'images_sha256', 'images_fingerprint')
#: The zoo CLIP ViT-B/16 zero-shot config of MMPretrain.
DEFAULT_CLIP_CONFIG = 'mmpretrain::clip/clip_vit-base-p16_zeroshot-cls_in1k.py'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='\n'.join(__doc__.split('\n')[1:]))
    parser.add_argument('config', help='the training config')
    parser.add_argument('--source', choices=SOURCES, required=True,
                        help='where the scores come from')
    parser.add_argument('--out', help="the score file; defaults to the "
                        "config's model.head.label_bank.score_file, else "
                        '<data_root>/teacher_scores/<source>[_crops].npz')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an --out made for something else')
    group = parser.add_argument_group('--source file')
    group.add_argument('--scores', help='npz, npy or csv keyed by image path')
    group.add_argument('--img-paths', help='the image paths of a .npy '
                       '(npy of strings or text, one per line)')
    group.add_argument('--classes', help='the class names of the columns '
                       '(text, one per line); default: the file\'s own, else '
                       "the dataset's order")
    group = parser.add_argument_group('--source model / clip')
    group.add_argument('--teacher-config',
                       help='MMPretrain config of the teacher (clip: default '
                       f'{DEFAULT_CLIP_CONFIG})')
    group.add_argument('--checkpoint', help="the teacher's weights")
    group.add_argument('--teacher-options', nargs='+',
                       action=ConfigOptionsAction,
                       help='override entries of the teacher config, e.g. '
                       'model.tokenizer.name_or_path=checkpoints/clip-tok')
    group.add_argument('--prompt', action='append', dest='prompts',
                       help="clip: a prompt template with {} for the class "
                       "name, repeatable (default: 'a photo of a {}.')")
    group.add_argument('--temperature', type=float, default=0.01,
                       help='clip: softmax temperature of the cosine '
                       'similarities (default 0.01)')
    group.add_argument('--feature-cache',
                       help='model: for a teacher of cached features '
                       '(PrecomputedFeatures backbone, the linear regime), '
                       "the cache of the scored images; default: CONFIG's "
                       "LoadCachedFeatures file, else the teacher config's")
    group.add_argument('--crops', type=int, default=0, metavar='G',
                       help="also score DAMP's G x G crops (AEVLP: 4, CUB 5)")
    group.add_argument('--image-size', type=int, default=224)
    group.add_argument('--batch-size', type=int, default=32)
    group.add_argument('--device', default='cuda' if _cuda() else 'cpu')
    group.add_argument('--save-every', type=int, default=1000,
                       help='images between two saves of the progress')
    add_cfg_options(parser, 'train_dataloader.dataset.data_root=data/voc')
    return parser.parse_args(argv)


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def training_dataset(cfg: Config):
    """The training dataset of ``cfg``, without pipeline."""
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    dataset_cfg = cfg.train_dataloader.dataset.copy()
    while 'dataset' in dataset_cfg and 'data_root' not in dataset_cfg:
        dataset_cfg = dataset_cfg['dataset'].copy()  # a dataset wrapper
    dataset_cfg['pipeline'] = []
    return DATASETS.build(dataset_cfg)


def _read_lines(path: str) -> List[str]:
    if path.endswith('.npy'):
        return [str(p) for p in np.load(path, allow_pickle=False)]
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def read_user_file(args) -> Tuple[List[str], Optional[List[str]], np.ndarray,
                                  Optional[np.ndarray]]:
    """Image keys, class names (or None), scores (M, C') and crop scores of
    the user's file."""
    path = args.scores
    if not path or not osp.isfile(path):
        raise FileNotFoundError(
            f'--source file needs --scores FILE (npz, npy or csv), got '
            f'{path!r}')
    names, crops = None, None
    if path.endswith('.csv'):
        with open(path, newline='') as f:
            rows = [r for r in csv.reader(f) if r]
        # the header: the image column, then the class names
        names, rows = [c.strip() for c in rows[0][1:]], rows[1:]
        keys = [r[0].strip() for r in rows]
        try:
            scores = np.array([[float(v) for v in r[1:]] for r in rows])
        except ValueError as err:
            raise ValueError(f'{path}: {err}; expected one image path and '
                             'one number per class on each row') from None
    elif path.endswith('.npz'):
        from spml_mm.datasets.teacher_scores import not_npz
        problem = not_npz(path)
        if problem:
            raise ValueError(f'{problem}; --scores takes an .npz, .npy or '
                             '.csv (a table of text is a .csv)')
        with np.load(path, allow_pickle=False) as data:
            if 'scores' not in data.files or not ({'img_paths', 'images'} &
                                                  set(data.files)):
                raise ValueError(
                    f'{path} holds {data.files}; a .npz of scores needs '
                    "'scores' (N x C) and 'img_paths' (N), optionally "
                    "'classes' (C) and 'crop_scores' (N x K x C)")
            scores = data['scores']
            keys = [str(p) for p in data['img_paths' if 'img_paths' in
                                         data.files else 'images']]
            if 'classes' in data.files:
                names = [str(c) for c in data['classes']]
            if 'crop_scores' in data.files:
                crops = data['crop_scores']
    elif path.endswith('.npy'):
        if not args.img_paths:
            raise ValueError(f'{path}: a .npy holds no image paths; pass '
                             'them with --img-paths (one per row)')
        scores = np.load(path, allow_pickle=False)
        keys = _read_lines(args.img_paths)
    else:
        raise ValueError(f'{path}: --scores must be a .npz, .npy or .csv')
    if args.classes:
        names = _read_lines(args.classes)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or len(scores) != len(keys):
        raise ValueError(f'{path}: scores of shape {scores.shape} for '
                         f'{len(keys)} image paths; expected (N, C)')
    if names is not None and len(names) != scores.shape[1]:
        raise ValueError(f'{path}: {len(names)} class names for '
                         f'{scores.shape[1]} score columns')
    return keys, names, scores, crops


def match_rows(keys: List[str], img_paths: List[str], data_root: str,
               source: str) -> Tuple[np.ndarray, int]:
    """The row of the user's file of each dataset image, and the number of
    rows that name no dataset image.

    A key matches an image when it is its path relative to ``data_root``,
    the same path made absolute, or a trailing part of it (``x.jpg``,
    ``JPEGImages/x.jpg``) that names one image only.
    """
    root = osp.abspath(data_root or '.')
    index = {p: i for i, p in enumerate(img_paths)}
    suffixes = {}
    for p in img_paths:
        parts = p.split(os.sep)
        for k in range(1, len(parts)):
            suffixes.setdefault(os.sep.join(parts[k:]), []).append(p)
    rows = np.full(len(img_paths), -1)
    unmatched, ambiguous = 0, []
    for row, key in enumerate(keys):
        key = osp.normpath(key)
        if osp.isabs(key):
            key = osp.relpath(key, root)
        found = [key] if key in index else suffixes.get(key, [])
        if len(found) > 1:
            ambiguous.append(f'{key!r} ({len(found)} images)')
        elif not found:
            unmatched += 1
        elif rows[index[found[0]]] >= 0:
            raise ValueError(f'{source}: two rows name {found[0]!r}')
        else:
            rows[index[found[0]]] = row
    if ambiguous:
        raise ValueError(
            f'{source}: {len(ambiguous)} image paths name several images of '
            f'the dataset: {", ".join(ambiguous[:5])}; give longer paths')
    missing = [img_paths[i] for i in np.flatnonzero(rows < 0)]
    if missing:
        raise ValueError(
            f'{source} has no scores for {len(missing)} of the dataset\'s '
            f'{len(img_paths)} images (first: {missing[0]!r}, relative to '
            f'{data_root}); score every training image')
    return rows, unmatched


def convert_user_file(args, img_paths, classes, data_root):
    """The user's scores in the dataset's rows and classes."""
    from spml_mm.datasets.teacher_scores import _check_scores
    keys, names, scores, crops = read_user_file(args)
    rows, dropped = match_rows(keys, img_paths, data_root, args.scores)
    if names is None:
        if scores.shape[1] != len(classes):
            raise ValueError(
                f'{args.scores}: {scores.shape[1]} columns and no class '
                f'names, the dataset has {len(classes)} classes; name the '
                'columns (csv header, npz classes or --classes)')
        columns, names_from = np.arange(len(classes)), 'dataset order'
    else:
        missing = [c for c in classes if c not in names]
        if missing:
            raise ValueError(
                f'{args.scores} has no column for {len(missing)} of the '
                f"dataset's classes: {missing[:10]}")
        columns, names_from = np.array([names.index(c) for c in classes]), \
            'file'
    scores = scores[rows][:, columns]
    _check_scores('scores', scores, args.scores)
    if crops is not None:
        crops = np.asarray(crops)[rows][:, :, columns]
        _check_scores('crop_scores', crops, args.scores)
    if dropped:
        print(f'{dropped} rows of {args.scores} name no training image and '
              'are left out')
    return scores, crops, dict(class_names_from=names_from,
                               rows_left_out=dropped)


def config_label_bank(cfg: Config) -> dict:
    """The label bank of the training config's head, or {}."""
    model = cfg.get('model') or {}
    return dict((model.get('head') or {}).get('label_bank') or {})


def cached_features_file(cfg: Config) -> Optional[str]:
    """The ``cache_file`` of the first ``LoadCachedFeatures`` of the
    config's training or test pipeline, or None."""
    for loader in ('train_dataloader', 'test_dataloader'):
        dataset = (cfg.get(loader) or {}).get('dataset') or {}
        for step in dataset.get('pipeline') or []:
            if step.get('type') == 'LoadCachedFeatures':
                return step['cache_file']
    return None


def default_out(cfg: Config, dataset, args) -> str:
    """The file the config's label bank reads (``score_file``), else
    ``<data_root>/teacher_scores/<source>[_crops].npz``."""
    score_file = config_label_bank(cfg).get('score_file')
    if score_file:
        return score_file
    crops = '_crops' if args.crops else ''
    return osp.join(dataset.data_root or '.', 'teacher_scores',
                    f'{args.source}{crops}.npz')


def run_meta(args, argv, dataset, img_paths, classes, fingerprints,
             out) -> dict:
    """What the file records of the run: its images, classes, command,
    config and dataset (the teacher's part: :func:`add_teacher_meta`)."""
    command = 'python tools/score_teacher.py ' + shlex.join(
        sys.argv[1:] if argv is None else list(argv))
    if '--out' not in command:
        command += f' --out {shlex.quote(out)}'
    return dict(source=args.source, num_images=len(img_paths),
                images_sha256=paths_sha256(img_paths),
                images_fingerprint=paths_sha256(fingerprints),
                classes=classes, command=command, config=args.config,
                dataset=dict(type=type(dataset).__name__,
                             data_root=dataset.data_root,
                             split=getattr(dataset, 'split', None)))


def add_teacher_meta(args, cfg: Config, meta: dict) -> Optional[Config]:
    """Record the teacher of ``--source`` in ``meta``: the user's file, or
    the model's config, weights, crops and prompts (and the feature cache
    a teacher on cached features reads); the model's config."""
    if args.source == 'ram':
        raise NotImplementedError(RAM_NOT_YET)
    if args.source == 'file':
        if args.scores and osp.isfile(args.scores):
            meta.update(scores_file=args.scores,
                        scores_file_sha256=file_sha256(args.scores))
        return None
    teacher_config = args.teacher_config or (
        DEFAULT_CLIP_CONFIG if args.source == 'clip' else None)
    if teacher_config is None:
        raise ValueError('--source model needs --teacher-config')
    if not args.checkpoint:
        raise ValueError(f'--source {args.source} needs --checkpoint '
                         '(the teacher\'s weights)')
    teacher_cfg = load_teacher_config(teacher_config)
    if args.teacher_options:
        teacher_cfg.merge_from_dict(args.teacher_options)
    meta.update(
        teacher_config=teacher_config,
        teacher_config_sha256=paths_sha256(
            [json.dumps(teacher_cfg.model.to_dict(), sort_keys=True,
                        default=str)]),
        checkpoint=args.checkpoint,
        checkpoint_sha256=file_sha256(args.checkpoint),
        crop_grid=args.crops, image_size=args.image_size,
        interpolation='bilinear')
    if args.source == 'clip':
        meta.update(prompts=list(args.prompts or DEFAULT_PROMPTS),
                    temperature=args.temperature)
    backbone = teacher_cfg.model.get('backbone') or {}
    if backbone.get('type') == 'PrecomputedFeatures':
        features = args.feature_cache or cached_features_file(
            cfg) or cached_features_file(teacher_cfg)
        if not features or not osp.isfile(features):
            raise FileNotFoundError(
                f'{teacher_config} scores cached features; no cache '
                f'of the images found ({features!r}): write it with '
                'tools/cache_features.py or pass --feature-cache')
        meta.update(feature_cache=features,
                    feature_cache_sha256=file_sha256(features),
                    image_size=None, interpolation=None)
    return teacher_cfg


def reuse(out: str, identity: dict, dataset, img_paths, classes) -> None:
    """Reuse the file ``out`` made by the same run: refused where it was
    made for something else; where it scored other images (a subset of the
    scored set, an image missing or changed) ``teacher_rows`` reuses the
    subset and names the others."""
    table = read_teacher_scores(out)
    diffs = [
        diff for diff in identity_differences(
            run_identity(table['meta']), identity)
        if diff.split(':')[0] not in IMAGE_KEYS
    ]
    if diffs:
        raise TeacherScoreError(
            f'{out} exists and was made for something else: '
            f'{"; ".join(diffs)}. Pass --overwrite to replace it, '
            'or another --out.')
    teacher_rows(table, out, img_paths, classes, dataset.data_root,
                 describe_dataset(dataset))
    subset = ('' if len(table['img_paths']) == len(img_paths) else
              f' for these {len(img_paths)} of its '
              f'{len(table["img_paths"])} images')
    print(f'{out} holds these scores already{subset} (made '
          f'{table["meta"].get("created")}); reusing it')


def scores_of(args, teacher_cfg, meta, identity, out, dataset, img_paths,
              classes):
    """The scores, crop scores and what the teacher adds to the record:
    the user's file converted, or the images scored by the teacher (its
    progress in ``OUT.partial.npz``)."""
    if args.source == 'file':
        return convert_user_file(args, img_paths, classes, dataset.data_root)
    teacher = build_teacher(
        args.source, teacher_cfg, args.checkpoint, classes,
        args.image_size, meta.get('prompts', DEFAULT_PROMPTS),
        args.temperature, args.device)
    os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
    scores, crops, extra = score_images(
        teacher, img_paths, dataset.data_root or '', identity,
        batch_size=args.batch_size, grid=args.crops,
        partial_path=out + '.partial.npz', save_every=args.save_every,
        feature_cache=meta.get('feature_cache'))
    extra.update(teacher.meta())
    return scores, crops, extra


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    dataset = training_dataset(cfg)
    img_paths, classes = dataset_image_paths(dataset), dataset_classes(dataset)
    out = args.out or default_out(cfg, dataset, args)
    try:
        # an input is never written over; an existing file is reused or
        # refused below (reuse), replaced only with --overwrite
        check_output_file(
            out, ('.npz', ),
            [args.config, args.scores, args.img_paths, args.classes,
             args.checkpoint, args.teacher_config, args.feature_cache],
            written_by_tool=lambda _: True, overwrite=args.overwrite)
    except OutputFileError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    if config_label_bank(cfg).get('type') == 'DAMPLabelBank' and \
            not args.crops and args.source != 'file':
        print(f'error: {args.config} trains with DAMP, which reads crop '
              'scores; pass --crops 4 (AEVLP\'s grid; 5 for CUB)',
              file=sys.stderr)
        return 1
    try:
        fingerprints = image_fingerprints(img_paths, dataset.data_root)
        meta = run_meta(args, argv, dataset, img_paths, classes,
                        fingerprints, out)
        teacher_cfg = add_teacher_meta(args, cfg, meta)
        identity = run_identity(meta)
        if osp.isfile(out) and not args.overwrite:
            reuse(out, identity, dataset, img_paths, classes)
            return 0
        scores, crops, extra = scores_of(args, teacher_cfg, meta, identity,
                                         out, dataset, img_paths, classes)
        # what the run was identified by stays as the cache compares it
        meta.update({k: v for k, v in extra.items() if k not in identity})
        save_teacher_scores(out, scores, img_paths, classes, meta,
                            crop_scores=crops, img_fingerprints=fingerprints)
    except (TeacherScoreError, ValueError, FileNotFoundError, ImportError,
            NotImplementedError, TeacherUnavailableError) as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    if osp.isfile(out + '.partial.npz'):
        os.remove(out + '.partial.npz')
    top = scores.max(1).mean()
    crops_note = f', {crops.shape[1]} crops each' if crops is not None else ''
    print(f'wrote {out}: {scores.shape[0]} images x {scores.shape[1]} '
          f'classes{crops_note}, mean score {scores.mean():.4f}, mean top '
          f'score {top:.4f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
