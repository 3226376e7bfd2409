"""Teacher scores: a table of images x classes that a teacher gave a dataset.

A teacher score file is one ``.npz`` written by ``tools/score_teacher.py``
(or :func:`save_teacher_scores`) and read by the label bank through
:func:`load_teacher_scores`. It holds:

- ``scores``: float32 (N, C) in [0, 1], the teacher's score of each whole
  image and class;
- ``crop_scores`` (optional): float32 (N, K, C) in [0, 1], the score of each
  of the K crops of each image (DAMP's grid, row by row). The label bank
  combines them with ``scores`` (DAMP's combination depends on each image's
  observed positive, which the training set holds);
- ``img_paths``: str (N,), each image's path relative to the dataset's
  ``data_root``, as the dataset lists it;
- ``img_fingerprints``: str (N,), ``SIZE:DIGEST`` of each image file when
  it was scored (:func:`image_fingerprint`), so that other images at the
  same paths (a dataset regenerated or replaced) are refused;
- ``classes``: str (C,), the class names in the dataset's order;
- ``meta``: a JSON string saying what produced the scores (``source``: one of
  :data:`SOURCES`; the model config, checkpoint sha256, prompts, crop grid,
  image size, the command, when and with which spml_mm version).

Nothing in the file is a pickled object, so reading it runs no code.
"""
import hashlib
import io
import json
import os
import os.path as osp
import re
import time
import zipfile
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

#: What can produce a score table (``meta['source']``).
SOURCES = ('file', 'model', 'clip', 'ram', 'synthetic')
#: The arrays of a score file, required and optional.
REQUIRED_KEYS = ('scores', 'img_paths', 'classes', 'meta')
OPTIONAL_KEYS = ('crop_scores', 'img_fingerprints')
#: Bytes of each end of an image file that its fingerprint hashes.
FINGERPRINT_BYTES = 4096
#: The first bytes of a zip archive, which an ``.npz`` is.
ZIP_MAGIC = (b'PK\x03\x04', b'PK\x05\x06')
#: The command that writes a synthetic teacher's file (``--crops K``: K
#: crops per image).
SYNTHETIC_COMMAND = ('PYTHONPATH=.dev_scripts python -m '
                     'benchmark.teacher_quality --write-teacher CONFIG '
                     '--noise {noise} --crops {crops} --teacher-out {path}')


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


def describe_dataset(dataset) -> str:
    """How messages name ``dataset``: its type and ``data_root``."""
    return (f'the dataset ({type(dataset).__name__}, '
            f'{getattr(dataset, "data_root", "")})')


def file_sha256(path: str) -> str:
    """sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def image_fingerprint(path: str) -> str:
    """``SIZE:DIGEST`` of an image file: its size in bytes and a 64-bit
    blake2b digest of its first and last :data:`FINGERPRINT_BYTES` bytes
    (two reads, whatever the file's size)."""
    with open(path, 'rb') as f:
        size = os.fstat(f.fileno()).st_size
        digest = hashlib.blake2b(f.read(FINGERPRINT_BYTES), digest_size=8)
        if size > FINGERPRINT_BYTES:
            f.seek(max(size - FINGERPRINT_BYTES, FINGERPRINT_BYTES))
            digest.update(f.read())
    return f'{size}:{digest.hexdigest()}'


def image_fingerprints(img_paths: Sequence[str],
                       data_root: Optional[str]) -> List[str]:
    """The :func:`image_fingerprint` of each of ``img_paths`` (relative to
    ``data_root``)."""
    fingerprints = []
    for path in img_paths:
        full = osp.join(data_root or '', path)
        try:
            fingerprints.append(image_fingerprint(full))
        except OSError as err:
            raise TeacherScoreError(
                f'image {full} cannot be read ({err.strerror}); '
                'python tools/check_dataset.py CONFIG lists every missing '
                'or unreadable image.') from None
    return fingerprints


def not_npz(path: str) -> Optional[str]:
    """Why ``path`` is not an ``.npz`` (a zip archive), or None."""
    with open(path, 'rb') as f:
        head = f.read(16)
    if head[:4] in ZIP_MAGIC:
        return None
    if not head:
        return f'{path} is empty, not an .npz file'
    return (f'{path} is not an .npz file (a zip archive): it starts with '
            f'{head!r}')


def rewrite_command(path: str,
                    meta: Optional[dict] = None,
                    crops: bool = False) -> str:
    """The command that writes the score file ``path`` again (``crops``:
    with crop scores, AEVLP's), replacing it where it exists."""
    meta = meta or {}
    if meta.get('source') == 'synthetic':
        return SYNTHETIC_COMMAND.format(
            noise=meta.get('noise', 'NOISE'),
            crops=4 if crops else meta.get('crops', 0),
            path=path)
    command = meta.get('command') or (
        'python tools/score_teacher.py CONFIG --source '
        f'{meta.get("source", "{file,model,clip,ram}")} ... --out {path}')
    if crops:
        command, found = re.subn(r'--crops[ =]\S+', '--crops 4', command)
        if not found:
            command += ' --crops 4'
    if osp.isfile(path) and '--overwrite' not in command.split():
        command += ' --overwrite'
    return command


def bound_path(path: str) -> str:
    """Where a score file bound to its images (``--source file --scores
    PATH``) goes: beside it, never over it (an input is not written)."""
    stem, ext = osp.splitext(path)
    return f'{stem}_bound{ext or ".npz"}'


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
                        crop_scores=None,
                        *,
                        img_fingerprints: Sequence[str]) -> None:
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
        img_fingerprints (Sequence[str]): The :func:`image_fingerprints` of
            the N images scored, taken when they were read.
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
    if len(img_fingerprints) != len(img_paths):
        raise TeacherScoreError(
            f'{path}: {len(img_fingerprints)} image fingerprints for '
            f'{len(img_paths)} images.')
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
                  img_fingerprints=np.array(img_fingerprints, dtype=str),
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
    problem = not_npz(path)
    if problem:
        raise TeacherScoreError(
            f'{problem}; a teacher score file is an .npz written by '
            f'tools/score_teacher.py: {rewrite_command(path)}')
    try:
        with np.load(path, allow_pickle=False) as data:
            table = {k: data[k] for k in data.files}
    except ValueError as err:
        raise TeacherScoreError(
            f'{path}: holds pickled Python objects, which are not read '
            f'({err}); write it with {rewrite_command(path)}') from None
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        raise TeacherScoreError(
            f'{path}: cannot be read ({err}); the file is truncated or '
            f'damaged. Write it again with {rewrite_command(path)}') from None
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
    if len(table.get('img_fingerprints', ())) not in (0, n):
        raise TeacherScoreError(
            f'{path}: {len(table["img_fingerprints"])} image fingerprints '
            f'for {n} images; write it again with {command}')
    for name in ('scores', 'crop_scores'):
        if name in table:
            try:
                _check_scores(name, table[name], path)
            except TeacherScoreError as err:
                raise TeacherScoreError(
                    f'{err} Write it again with {command}') from None
    table['img_paths'] = [osp.normpath(str(p)) for p in table['img_paths']]
    table['classes'] = [str(c) for c in table['classes']]
    if 'img_fingerprints' in table:
        table['img_fingerprints'] = [str(f) for f in table['img_fingerprints']]
    return table


def _fingerprint_difference(then: str, now: str) -> str:
    size_then, size_now = then.split(':')[0], now.split(':')[0]
    if size_then != size_now:
        return f'{size_then} bytes when scored, {size_now} now'
    return f'{size_now} bytes as when scored, other content'


def check_fingerprints(table: dict, path: str, img_paths: Sequence[str],
                       rows: np.ndarray, data_root: Optional[str],
                       what: str) -> None:
    """Refuse ``table`` unless rows ``rows`` are the fingerprints of the
    image files ``img_paths`` (relative to ``data_root``) now; a file
    without fingerprints is refused too."""
    meta = table['meta']
    if 'img_fingerprints' not in table:
        raise TeacherScoreError(
            f'{path} records no image fingerprints (written '
            f'{meta.get("created", "at an unknown date")} by spml-mm '
            f'{meta.get("spml_mm_version", "?")}, before score files kept '
            f'them), so nothing shows that {what} holds the images it '
            'scored rather than others at the same paths. Score the images '
            f'again with {rewrite_command(path, meta)}; or, if they are the '
            'very images it scored, bind a copy to them with python '
            f'tools/score_teacher.py CONFIG --source file --scores {path} '
            f'--out {bound_path(path)} and train with --cfg-options '
            f'model.head.label_bank.score_file={bound_path(path)}')
    now = image_fingerprints(img_paths, data_root)
    then = [table['img_fingerprints'][r] for r in rows]
    changed = [k for k, (a, b) in enumerate(zip(then, now)) if a != b]
    if changed:
        k = changed[0]
        raise TeacherScoreError(
            f'{path} scored other image files than those of {what}: '
            f'{len(changed)} of the {len(now)} images differ from the ones '
            f'it scored (first: {img_paths[k]!r}, '
            f'{_fingerprint_difference(then[k], now[k])}): they were '
            'regenerated or replaced since it was written '
            f'({meta.get("created", "date unknown")}). Score them again '
            f'with {rewrite_command(path, meta)}')


def teacher_rows(table: dict,
                 path: str,
                 img_paths: Sequence[str],
                 classes: Sequence[str],
                 data_root: Optional[str],
                 what: str = 'the dataset') -> np.ndarray:
    """The row of ``table`` of each of ``img_paths``; refuses a table made
    for other classes, without some of the images, or for other image files
    at those paths (:func:`check_fingerprints`), naming what differs. Rows
    of other images (a subset of the scored set is trained) are ignored."""
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
    if missing:
        n_file, n_data = len(rows), len(wanted)
        size = ('' if n_file == n_data else
                f'it has {n_file} images and {what} {n_data} (another '
                'dataset or split?); ')
        extra = sorted(set(rows) - set(wanted))
        others = (f'; {len(extra)} images in it are not in {what} (first: '
                  f'{extra[0]!r})' if extra else '')
        raise TeacherScoreError(
            f'{path} was written for another dataset: {size}'
            f'{len(missing)} images of {what} are missing from it (first: '
            f'{missing[0]!r}){others}. Write it again for this dataset '
            f'with {command}')
    found = np.array([rows[p] for p in wanted], dtype=np.int64)
    check_fingerprints(table, path, wanted, found, data_root, what)
    return found


def load_teacher_table(path: str,
                       dataset,
                       crops: bool = False) -> Dict[str, torch.Tensor]:
    """The teacher scores of every image of ``dataset``, checked against
    its classes, images and image files (:func:`teacher_rows`).

    Args:
        path (str): A teacher score ``.npz``.
        dataset (BaseDataset): The (training) dataset the scores are for.
        crops (bool): Refuse a file without crop scores
            (:func:`no_crops_error`), for a reader of them (DAMP). Defaults
            to False.

    Returns:
        dict: ``scores``, float32 (len(dataset), C) in [0, 1], row ``i`` the
        image of ``sample_idx`` ``i``, and, where the file has them,
        ``crop_scores`` (len(dataset), K, C).
    """
    table = read_teacher_scores(path)
    rows = teacher_rows(table, path, dataset_image_paths(dataset),
                        dataset_classes(dataset),
                        getattr(dataset, 'data_root', None),
                        describe_dataset(dataset))
    if crops and 'crop_scores' not in table:
        raise no_crops_error(path)
    return {
        name: torch.from_numpy(
            np.ascontiguousarray(table[name][rows], np.float32))
        for name in ('scores', 'crop_scores') if name in table
    }


def no_crops_error(path: str) -> TeacherScoreError:
    """The refusal of the score file ``path`` without crop scores where
    DAMP reads them."""
    meta = read_teacher_scores(path)['meta']
    if meta.get('source') == 'file':
        how = ('add crop_scores (N x K x C) to your scores '
               f'({meta.get("scores_file", "the --scores file")}) and '
               f'convert them again with {rewrite_command(path, meta)}')
    else:
        how = ('write it with crop scores (AEVLP scores a 4 x 4 grid) with '
               f'{rewrite_command(path, meta, crops=True)}')
    return TeacherScoreError(f'{path} holds no crop scores; {how}')


def load_teacher_scores(path: str,
                        dataset,
                        crops: bool = False) -> torch.Tensor:
    """The teacher scores of every image of ``dataset``.

    Args:
        path (str): A teacher score ``.npz``.
        dataset (BaseDataset): The (training) dataset the scores are for;
            its images and classes must be in the file.
        crops (bool): Return the crop scores (N, K, C) instead; refuses a
            file without them. Defaults to False.

    Returns:
        torch.Tensor: float32 (len(dataset), C) in [0, 1], row ``i`` the
        image of ``sample_idx`` ``i``.
    """
    table = load_teacher_table(path, dataset, crops)
    return table['crop_scores' if crops else 'scores']
