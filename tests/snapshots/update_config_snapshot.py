"""Write tests/snapshots/config_snapshot.jsonl: every config's resolved
content, one line per config (keys sorted, tuples as lists).

Run it on purpose, after a change that should change what a config resolves
to, and commit the result with the change::

    python -m tests.snapshots.update_config_snapshot

tests/test_config_snapshot.py compares each config with its line.
"""
import glob
import json
import math
import os.path as osp

from mmengine.config import Config

import spml_mm  # noqa: F401  (resolves spml_mm:: and mmpretrain::)

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
SNAPSHOT = osp.join(REPO, 'tests', 'snapshots', 'config_snapshot.jsonl')


def config_paths():
    """Every config outside configs/_base_, relative to the repository."""
    return sorted(
        osp.relpath(p, REPO)
        for p in glob.glob(osp.join(REPO, 'configs', '**', '*.py'),
                           recursive=True)
        if '_base_' not in osp.relpath(p, REPO).split(osp.sep))


def canonical(value):
    """JSON types only: tuples become lists, non-finite floats strings."""
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f'{type(value).__name__} in a config: {value!r}')


def resolved(path):
    """The config's content after its bases are merged, in JSON types."""
    return canonical(Config.fromfile(osp.join(REPO, path)).to_dict())


def line(path):
    """One config's snapshot line: its path and content, keys sorted."""
    return json.dumps(dict(config=path, content=resolved(path)),
                      sort_keys=True, separators=(',', ':'))


def main():
    with open(SNAPSHOT, 'w') as f:
        for path in config_paths():
            f.write(line(path) + '\n')
    print(f'{SNAPSHOT}: {len(config_paths())} configs')


if __name__ == '__main__':
    main()
