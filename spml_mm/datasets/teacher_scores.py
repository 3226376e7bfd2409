"""Teacher scores: a table of images x classes that a teacher gave a dataset.

A teacher score file is one ``.npz`` written by ``tools/score_teacher.py``
(or :func:`save_teacher_scores`) and read by the label bank through
:func:`load_teacher_scores`. It holds:

- ``scores``: float32 (N, C) in [0, 1], the teacher's score of each image
  and class (for DAMP, whole image and crops already combined);
- ``crop_scores`` (optional): float32 (N, K, C) in [0, 1], the score of each
  of the K crops of each image;
- ``img_paths``: str (N,), each image's path relative to the dataset's
  ``data_root``, as the dataset lists it;
- ``classes``: str (C,), the class names in the dataset's order;
- ``meta``: a JSON string saying what produced the scores (``source``: one of
  :data:`SOURCES`; the model config, checkpoint sha256, prompts, crop grid,
  image size, the command, when and with which spml_mm version).

Nothing in the file is a pickled object, so reading it runs no code.
"""
import io
import json
import os
import os.path as osp
import time
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

#: What can produce a score table (``meta['source']``).
SOURCES = ('file', 'model', 'clip', 'ram', 'synthetic')
#: The arrays of a score file, required and optional.
REQUIRED_KEYS = ('scores', 'img_paths', 'classes', 'meta')
OPTIONAL_KEYS = ('crop_scores', )


class TeacherScoreError(ValueError):
    """A teacher score file that does not fit the dataset or the format."""


def dataset_image_paths(dataset) -> List[str]:
    """Every image of ``dataset`` in ``sample_idx`` order, as a path
    relative to the dataset's ``data_root`` (normalised)."""
    root = getattr(dataset, 'data_root', None) or ''
    paths = []
    for i in range(len(dataset)):
        path = dataset.get_data_info(i)['img_path']
        paths.append(osp.normpath(osp.relpath(path, root) if root else path))
    return paths


def dataset_classes(dataset) -> List[str]:
    """The class names of ``dataset``, in order."""
    classes = dataset.metainfo.get('classes')
    if classes is None:
        raise TeacherScoreError(
            f'{type(dataset).__name__} has no class names (metainfo '
            "'classes'); teacher scores are matched to classes by name.")
    return [str(c) for c in classes]


def rewrite_command(path: str, meta: Optional[dict] = None) -> str:
    """The command that writes the score file ``path`` again."""
    if meta and meta.get('command'):
        return meta['command']
    source = (meta or {}).get('source', '{file,model,clip,ram}')
    return (f'python tools/score_teacher.py CONFIG --source {source} ... '
            f'--out {path}')


def _check_scores(name: str, values: np.ndarray, where: str) -> None:
    """Refuse non-finite values and values outside [0, 1]."""
    finite = np.isfinite(values)
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise TeacherScoreError(
            f'{where}: {name} holds {int((~finite).sum())} non-finite '
            f'values (first in row {row}); a teacher score is a probability '
            'in [0, 1].')
    outside = (values < 0) | (values > 1)
    if outside.any():
        row = int(np.argwhere(outside)[0][0])
        raise TeacherScoreError(
            f'{where}: {name} holds {int(outside.sum())} values outside '
            f'[0, 1] (range {values.min():.4g} to {values.max():.4g}, first '
            f'in row {row}); a teacher score is a probability: apply the '
            'sigmoid or softmax to logits before saving them.')


def save_teacher_scores(path: str,
                        scores,
                        img_paths: Sequence[str],
                        classes: Sequence[str],
                        meta: Dict,
                        crop_scores=None) -> None:
    """Write a teacher score file (atomically: a reader never sees half a
    file).

    Args:
        path (str): The ``.npz`` to write.
        scores (array-like): (N, C) scores in [0, 1].
        img_paths (Sequence[str]): N distinct image paths relative to the
            dataset's ``data_root``.
        classes (Sequence[str]): The C class names.
        meta (dict): What produced the scores; ``source`` must be one of
            :data:`SOURCES`. ``created`` and ``spml_mm_version`` are added.
        crop_scores (array-like, optional): (N, K, C) scores of K crops.
    """
    from spml_mm.version import __version__
    scores = np.asarray(scores, dtype=np.float32)
    img_paths = [osp.normpath(str(p)) for p in img_paths]
    classes = [str(c) for c in classes]
    if scores.ndim != 2 or scores.shape != (len(img_paths), len(classes)):
        raise TeacherScoreError(
            f'{path}: scores of shape {scores.shape} for {len(img_paths)} '
            f'images and {len(classes)} classes; expected '
            f'({len(img_paths)}, {len(classes)}).')
    _check_scores('scores', scores, path)
    if len(set(img_paths)) != len(img_paths):
        seen, twice = set(), []
        for p in img_paths:
            if p in seen:
                twice.append(p)
            seen.add(p)
        raise TeacherScoreError(
            f'{path}: {len(twice)} image paths are listed twice (first '
            f'{twice[0]!r}); each image has one row.')
    if len(set(classes)) != len(classes):
        raise TeacherScoreError(f'{path}: the class names repeat: {classes}')
    if meta.get('source') not in SOURCES:
        raise TeacherScoreError(
            f"{path}: meta['source'] must be one of {SOURCES}, got "
            f'{meta.get("source")!r}.')
    arrays = dict(scores=scores,
                  img_paths=np.array(img_paths, dtype=str),
                  classes=np.array(classes, dtype=str))
    if crop_scores is not None:
        crop_scores = np.asarray(crop_scores, dtype=np.float32)
        if crop_scores.ndim != 3 or crop_scores.shape[0] != scores.shape[0] \
                or crop_scores.shape[2] != scores.shape[1]:
            raise TeacherScoreError(
                f'{path}: crop_scores of shape {crop_scores.shape}; expected '
                f'({scores.shape[0]}, K, {scores.shape[1]}).')
        _check_scores('crop_scores', crop_scores, path)
        arrays['crop_scores'] = crop_scores
    meta = dict(meta)
    meta.setdefault('created',
                    time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))
    meta.setdefault('spml_mm_version', __version__)
    arrays['meta'] = np.array(json.dumps(meta, sort_keys=True))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    folder = osp.dirname(osp.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = osp.join(folder, f'.{osp.basename(path)}.{os.getpid()}.tmp')
    with open(tmp, 'wb') as f:
        f.write(buffer.getvalue())
    os.replace(tmp, path)


def read_teacher_scores(path: str) -> dict:
    """The arrays of a score file as they are stored (``meta`` parsed),
    checked against the format but not against a dataset."""
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'teacher score file {path} not found; write it with '
            f'{rewrite_command(path)}')
    try:
        with np.load(path, allow_pickle=False) as data:
            table = {k: data[k] for k in data.files}
    except ValueError as err:
        raise TeacherScoreError(
            f'{path}: cannot be read without unpickling ({err}); write it '
            f'with {rewrite_command(path)}') from None
    except (OSError, EOFError) as err:
        raise TeacherScoreError(
            f'{path}: cannot be read ({err}); the file is truncated or not '
            f'an .npz. Write it again with {rewrite_command(path)}') from None
    missing = [k for k in REQUIRED_KEYS if k not in table]
    if missing:
        raise TeacherScoreError(
            f'{path}: not a teacher score file (no {", ".join(missing)}; '
            f'it holds {", ".join(sorted(table))}). A score table of your '
            'own is converted with python tools/score_teacher.py CONFIG '
            f'--source file --scores YOUR_FILE --out {path}')
    try:
        table['meta'] = json.loads(str(table['meta']))
    except json.JSONDecodeError as err:
        raise TeacherScoreError(
            f'{path}: meta is not JSON ({err}); write the file again with '
            f'{rewrite_command(path)}') from None
    command = rewrite_command(path, table['meta'])
    scores = table['scores']
    n, c = len(table['img_paths']), len(table['classes'])
    if scores.shape != (n, c):
        raise TeacherScoreError(
            f'{path}: scores of shape {scores.shape} for {n} images and {c} '
            f'classes; write it again with {command}')
    crops = table.get('crop_scores')
    if crops is not None and (crops.ndim != 3 or crops.shape[0] != n
                              or crops.shape[2] != c):
        raise TeacherScoreError(
            f'{path}: crop_scores of shape {crops.shape}, expected ({n}, K, '
            f'{c}); write it again with {command}')
    for name in ('scores', 'crop_scores'):
        if name in table:
            try:
                _check_scores(name, table[name], path)
            except TeacherScoreError as err:
                raise TeacherScoreError(
                    f'{err} Write it again with {command}') from None
    table['img_paths'] = [osp.normpath(str(p)) for p in table['img_paths']]
    table['classes'] = [str(c) for c in table['classes']]
    return table


def teacher_rows(table: dict, path: str, img_paths: Sequence[str],
                 classes: Sequence[str], what: str = 'the dataset'
                 ) -> np.ndarray:
    """The row of ``table`` of each of ``img_paths``; refuses a table made
    for other classes or other images, naming what differs."""
    command = rewrite_command(path, table['meta'])
    classes = [str(c) for c in classes]
    if table['classes'] != classes:
        if sorted(table['classes']) == sorted(classes):
            moved = [f'{k}: {a!r} (file) vs {b!r}' for k, (a, b) in
                     enumerate(zip(table['classes'], classes)) if a != b]
            diff = 'the same classes in another order (' + \
                '; '.join(moved[:5]) + ')'
        else:
            extra = [c for c in table['classes'] if c not in classes]
            lost = [c for c in classes if c not in table['classes']]
            diff = (f'{len(table["classes"])} classes against '
                    f'{len(classes)}; only in the file: {extra[:10]}, '
                    f'only in {what}: {lost[:10]}')
        raise TeacherScoreError(
            f'{path} was written for another class list than {what}: {diff}. '
            f'Write it again for this dataset with {command}')
    rows = {p: i for i, p in enumerate(table['img_paths'])}
    wanted = [osp.normpath(str(p)) for p in img_paths]
    missing = [p for p in wanted if p not in rows]
    n_file, n_data = len(rows), len(wanted)
    extra = sorted(set(rows) - set(wanted))
    if missing or extra:
        size = ('' if n_file == n_data else
                f'it has {n_file} images and {what} {n_data} (another '
                'dataset or split?); ')
        parts = []
        if missing:
            parts.append(f'{len(missing)} images of {what} are missing '
                         f'from it (first: {missing[0]!r})')
        if extra:
            parts.append(f'{len(extra)} images in it are not in {what} '
                         f'(first: {extra[0]!r})')
        raise TeacherScoreError(
            f'{path} was written for another dataset: {size}'
            f'{"; ".join(parts)}. Write it again for this dataset with '
            f'{command}')
    return np.array([rows[p] for p in wanted], dtype=np.int64)


def load_teacher_scores(path: str,
                        dataset,
                        crops: bool = False) -> torch.Tensor:
    """The teacher scores of every image of ``dataset``.

    Args:
        path (str): A teacher score ``.npz``.
        dataset (BaseDataset): The (training) dataset the scores are for;
            its images and classes must be the file's.
        crops (bool): Return the crop scores (N, K, C) instead; refuses a
            file without them. Defaults to False.

    Returns:
        torch.Tensor: float32 (len(dataset), C) in [0, 1], row ``i`` the
        image of ``sample_idx`` ``i``.
    """
    table = read_teacher_scores(path)
    rows = teacher_rows(
        table, path, dataset_image_paths(dataset), dataset_classes(dataset),
        f'the dataset ({type(dataset).__name__}, '
        f'{getattr(dataset, "data_root", "")})')
    if crops:
        if 'crop_scores' not in table:
            raise TeacherScoreError(
                f'{path} holds no crop scores; write it with crops, e.g. '
                f'{rewrite_command(path, table["meta"])} --crops 3')
        return torch.from_numpy(
            np.ascontiguousarray(table['crop_scores'][rows], np.float32))
    return torch.from_numpy(
        np.ascontiguousarray(table['scores'][rows], np.float32))
