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
import os.path as osp
import tarfile
import tempfile

from benchmark.gpu_run.collecting import CollectError, collect
from benchmark.gpu_run.machine import PACK
from benchmark.common import REPO


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
        try:
            return collect(args.out, args.results_dir)
        except CollectError as err:
            parser.error(str(err))


if __name__ == '__main__':
    main()
