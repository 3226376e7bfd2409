"""Every config resolves to the content recorded in
tests/snapshots/config_snapshot.jsonl.

A refactor of configs/ (bases moved, values stated once) must not change what
any config resolves to; a change that means to, and a config added or
removed, regenerates the snapshot on purpose with
``python -m tests.snapshots.update_config_snapshot``.
"""
import functools
import json

import pytest

from tests.snapshots.update_config_snapshot import (SNAPSHOT, config_paths,
                                                    resolved)

UPDATE = 'python -m tests.snapshots.update_config_snapshot'


@functools.lru_cache(maxsize=None)
def snapshot():
    """{config path: resolved content} as recorded."""
    with open(SNAPSHOT) as f:
        entries = [json.loads(line) for line in f]
    return {e['config']: e['content'] for e in entries}


def differences(before, after, prefix=''):
    """Dotted keys (list items by index) whose values differ, each with its
    recorded and its current value."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(before.keys() | after.keys()):
            missing = '<absent>'
            found += differences(
                before.get(key, missing), after.get(key, missing),
                f'{prefix}{key}.')
        return found
    if (isinstance(before, list) and isinstance(after, list)
            and len(before) == len(after)):
        found = []
        for i, (b, a) in enumerate(zip(before, after)):
            found += differences(b, a, f'{prefix}{i}.')
        return found
    return [] if before == after else [(prefix[:-1], before, after)]


def test_differences_name_the_keys_that_differ():
    before = dict(model=dict(head=dict(lr=1, loss=[1, 2])), a=1)
    after = dict(model=dict(head=dict(lr=2, loss=[1, 3])), b=1)
    assert differences(before, after) == [
        ('a', 1, '<absent>'), ('b', '<absent>', 1),
        ('model.head.loss.1', 2, 3), ('model.head.lr', 1, 2)]
    assert differences(before, before) == []
    assert differences([1], [1, 2]) == [('', [1], [1, 2])]


def test_snapshot_lists_every_config():
    recorded, current = set(snapshot()), set(config_paths())
    assert recorded == current, (
        f'added: {sorted(current - recorded)}, '
        f'removed: {sorted(recorded - current)}; run {UPDATE}')


@pytest.mark.parametrize('path', config_paths())
def test_config_resolves_as_recorded(path):
    recorded = snapshot().get(path)
    assert recorded is not None, f'{path} is not in the snapshot; run {UPDATE}'
    found = differences(recorded, resolved(path))
    assert not found, f'{path} resolves differently ({UPDATE} if meant):\n' + (
        '\n'.join(f'  {key}: {b!r} -> {a!r}' for key, b, a in found))
