"""The order of the evidence's runs: each method's rate search (its grid,
a rate far below the others' best left out, a step past an edge where its
best is there), then its seeds; the model teacher and its readers last."""
import math
from typing import List, Tuple

from benchmark.pages.accuracy import grid_position
from benchmark.suites import PROXY_CONFIGS, TEACHER_CONFIGS

#: the queue: the papers' methods in the order of the table, then those that
#: read the model teacher's scores; each one's rate grid
METHODS = tuple(PROXY_CONFIGS)
TEACHER_METHODS = tuple(TEACHER_CONFIGS)
ADAM_RATES = ('1e-05', '0.0001', '0.001')
SGD_RATES = ('0.0001', '0.001', '0.01')
SEEDS = (0, 1, 2)
#: a grid rate is far below when it is more than this many points of
#: validation mAP below its method's best: one that every other method of
#: the grid that ran it found so is left out of the searches that lack it
#: (1e-5 lost 30 points for AN and the full-label bound)
FAR = 10.
#: a search whose best is at an edge of its grid goes a step past it on the
#: 1-3-10 ladder (1e-3 -> 3e-3), at most this many steps beyond the grid
PAST_EDGE = 2


def grid(method: str, tiny: bool = False) -> Tuple[str, ...]:
    """A method's rate grid (``--tiny``: one rate)."""
    rates = SGD_RATES if method.startswith('opml') else ADAM_RATES
    return rates[-1:] if tiny else rates


def ladder_step(rate: str, up: bool) -> str:
    """The rate a step past ``rate`` on the 1-3-10 ladder (up: 1e-3 ->
    3e-3 -> 1e-2; down: 1e-5 -> 3e-6), keyed as accuracy.py keys rates."""
    x = float(rate)
    e = math.floor(math.log10(x) + 1e-9)
    ladder = [float(f'{c}e{k}') for k in (e - 1, e, e + 1) for c in (1, 3)]
    step = min(v for v in ladder if v > x * (1 + 1e-9)) if up else max(
        v for v in ladder if v < x * (1 - 1e-9))
    return f'{step:g}'


def far_below(rate: str, method: str, search: dict) -> bool:
    """Whether every other method of ``method``'s grid whose search ran
    ``rate`` found it more than :data:`FAR` points below its best, and one
    did."""
    found = [runs for m, runs in search.items()
             if m != method and rate in runs and grid(m) == grid(method)]
    return bool(found) and all(
        max(r['val_mAP'] for r in runs.values()) - runs[rate]['val_mAP'] >
        FAR for runs in found)


def search_todo(method: str, search: dict, tiny: bool = False) -> List[str]:
    """The rates ``method``'s search still needs: its grid's, less those
    far below (:func:`far_below`); once they are in, where its best is at
    an edge of the rates searched, the rate a step past it, up to
    :data:`PAST_EDGE` steps beyond the grid and not a rate far below.
    Nothing left: the search is complete (``--tiny``: its one rate is
    in)."""
    runs, rates = search.get(method, {}), grid(method, tiny)
    todo = [r for r in rates
            if r not in runs and not far_below(r, method, search)]
    position = grid_position(runs) if runs else None
    if todo or tiny or position not in ('top edge', 'bottom edge'):
        return todo
    up = position == 'top edge'
    beyond = [r for r in runs if (float(r) > float(rates[-1]) if up else
                                  float(r) < float(rates[0]))]
    step = ladder_step(max(runs, key=lambda r: runs[r]['val_mAP']), up)
    if len(beyond) >= PAST_EDGE or far_below(step, method, search):
        return []
    return [step]


def evidence_queue(methods: List[str], search: dict, seeds: dict,
                   seed_list, tiny: bool, teacher: bool) -> List[tuple]:
    """The evidence runs ready to start, in order: the papers' methods'
    rate searches (:func:`search_todo`), then their seeds seed-major, each
    method's once its search is complete; then, for the teacher methods of
    ``methods``, the model teacher once the full-label bound's search is
    complete and until its score file exists (``teacher``), and the
    teacher methods' searches and seeds once it does."""

    def complete(method):
        return bool(search.get(method)) and not search_todo(
            method, search, tiny)

    readers = [m for m in methods if m in TEACHER_METHODS]
    groups = [[m for m in methods if m not in TEACHER_METHODS]] + (
        [readers] if teacher else [])
    tasks = []
    for group in groups:
        tasks += [('lr', m, lr) for m in group
                  for lr in search_todo(m, search, tiny)]
        tasks += [('seed', m, s) for s in seed_list for m in group
                  if str(s) not in seeds.get(m, {}) and complete(m)]
    if readers and not teacher and complete('full'):
        tasks.append(('teacher', 'full', 0))
    return tasks
