"""Copy what a GPU command (``tools/gpu_run.sh``) returned into the results
folder and write its pages from the jsons.

- ``gpu_tier.json`` and ``gpu_tier.md`` (pass/fail per test of the GPU
  tier);
- ``gpu.json`` and ``gpu.md`` (``.dev_scripts/benchmark/speed_gpu.py
  --render``, with the results folder's ``head_profile.json`` where there is
  one);
- ``gpu_profile.json`` and ``gpu_profile.md``;
- the evidence queue's ``accuracy_proxy-voc_finetune*`` json, md and png
  (the device merged them with the committed ones and wrote the pages);
- ``gpu_runs.json``: the manifest of every GPU command collected (device,
  versions, what each part did).

The pages of ``docs/results`` are a GPU's: the results of a ``--tiny``
rehearsal or of a command run without a GPU (``--device cpu``) are refused
there, and go into another ``--results-dir`` (e.g. ``work_dirs/results``).
A pack that does not unpack (a truncated copy) is refused, naming it.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.gpu_collect /path/to/returned/out
    git add docs/results && git commit
"""
import argparse
import glob
import os
import os.path as osp
import shutil
import tarfile
import tempfile

from benchmark.gpu_run.machine import PACK
from benchmark.pages import gpu
from benchmark.pages.gpu_profile import profile_page
from benchmark.pages.gpu_tier import tier_page
from benchmark.common import REPO, load_json, write_json


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out', help='the folder a GPU command returned '
                        f'(with its {PACK}), or the unpacked output')
    parser.add_argument('--results-dir',
                        default=osp.join(REPO, 'docs', 'results'))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as unpacked:
        packed = osp.join(args.out, PACK)
        if osp.isfile(packed):
            try:
                with tarfile.open(packed) as tar:
                    tar.extractall(unpacked, filter='data')
            except (tarfile.TarError, EOFError, OSError) as err:
                parser.error(f'{packed} does not unpack ({err}): a truncated '
                             'or damaged copy; copy it again from the '
                             'machine (nothing was written)')
            args.out = unpacked
        return collect(parser, args)


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


def collect(parser, args) -> list:
    manifest = load_json(osp.join(args.out, 'manifest.json'))
    if not manifest:
        parser.error(f'{args.out} has no manifest.json: not the output of '
                     'tools/gpu_run.sh')
    kind = manifest['kind']
    if osp.abspath(args.results_dir) == osp.join(REPO, 'docs', 'results') \
            and (kind['tiny'] or kind['device'] != 'cuda'):
        run = ('a --tiny rehearsal' if kind['tiny'] else
               f"a command run on {manifest['environment']['device']} "
               f"(--device {kind['device']})")
        parser.error(f"{run}: its results do not go into docs/results, whose "
                     'pages are a GPU\'s; give --results-dir (e.g. '
                     'work_dirs/results)')
    results = args.results_dir
    os.makedirs(results, exist_ok=True)
    written = copy_result(args.out, results, 'gpu_tier', tier_page)
    speed = osp.join(args.out, 'speed', 'gpu.json')
    if osp.isfile(speed):
        # the operators of every head's step (head_profile.py), if
        # profiled, under the heads table
        ops = osp.join(results, 'head_profile.json')
        gpu.write(load_json(speed), results,
                  load_json(ops) if osp.isfile(ops) else None)
        print(f'wrote {osp.join(results, "gpu.md")} from {speed}')
        written += ['gpu.json', 'gpu.md']
    written += copy_result(args.out, results, 'gpu_profile', profile_page)
    for path in sorted(glob.glob(osp.join(args.out, 'evidence',
                                          'accuracy_*'))):
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


if __name__ == '__main__':
    main()
