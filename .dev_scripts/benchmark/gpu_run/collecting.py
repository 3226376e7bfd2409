"""What a GPU command (``tools/gpu_run.sh``) measured, copied into a
results folder with its pages written from the jsons: shared by
``benchmark.gpu_collect`` (the machine the output comes back to) and the
next command on the same machine (``harness.carry_forward``)."""
import glob
import os
import os.path as osp
import shutil

from benchmark.pages import gpu
from benchmark.pages.gpu_profile import profile_page
from benchmark.pages.gpu_tier import tier_page
from benchmark.common import REPO, load_json, write_json


class CollectError(ValueError):
    """An output that is not a GPU command's, or a results folder it may
    not go into."""


def copy_result(out: str, results: str, name: str, page) -> list:
    """``name.json`` of the command's output ``out`` into ``results``,
    with its page ``name.md``; the files written."""
    found = load_json(osp.join(out, f'{name}.json'))
    if not found:
        return []
    write_json(osp.join(results, f'{name}.json'), found)
    with open(osp.join(results, f'{name}.md'), 'w') as f:
        f.write(page(found))
    return [f'{name}.json', f'{name}.md']


def collect(out: str, results: str) -> list:
    """The command's unpacked output ``out`` into the folder ``results``;
    the files written."""
    manifest = load_json(osp.join(out, 'manifest.json'))
    if not manifest:
        raise CollectError(f'{out} has no manifest.json: not the output '
                           'of tools/gpu_run.sh')
    kind = manifest['kind']
    if osp.abspath(results) == osp.join(REPO, 'docs', 'results') \
            and (kind['tiny'] or kind['device'] != 'cuda'):
        run = ('a --tiny rehearsal' if kind['tiny'] else
               f"a command run on {manifest['environment']['device']} "
               f"(--device {kind['device']})")
        raise CollectError(
            f'{run}: its results do not go into docs/results, whose pages '
            'are a GPU\'s; give --results-dir (e.g. work_dirs/results)')
    os.makedirs(results, exist_ok=True)
    written = copy_result(out, results, 'gpu_tier', tier_page)
    speed = osp.join(out, 'speed', 'gpu.json')
    if osp.isfile(speed):
        # the operators of every head's step (head_profile.py), if
        # profiled, under the heads table
        ops = osp.join(results, 'head_profile.json')
        gpu.write(load_json(speed), results,
                  load_json(ops) if osp.isfile(ops) else None)
        print(f'wrote {osp.join(results, "gpu.md")} from {speed}')
        written += ['gpu.json', 'gpu.md']
    written += copy_result(out, results, 'gpu_profile', profile_page)
    for path in sorted(glob.glob(osp.join(out, 'evidence', 'accuracy_*'))):
        shutil.copy(path, results)
        written.append(osp.basename(path))
    runs_path = osp.join(results, 'gpu_runs.json')
    runs = load_json(runs_path) or dict(runs=[])
    runs['runs'] = [r for r in runs['runs']
                    if r['started'] != manifest['started']] + [manifest]
    write_json(runs_path, runs)
    written.append('gpu_runs.json')
    print(f'wrote into {results}: {", ".join(written)}')
    return written
