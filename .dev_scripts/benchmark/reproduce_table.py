"""Print the table of a ``.dev_scripts/benchmark/reproduce.sh`` run.

Reads ``WORK_ROOT/<method>/seed<N>/test.log`` (the test mAP of the best
checkpoint) and ``train_seconds`` of every run, and prints the table of
``.dev_scripts/benchmark/accuracy.py`` (mean and spread over seeds, share of
the AN-to-full-label gap closed, training time) with the papers' number beside
each method (``docs/results/papers.json``). With ``--layout``, reads
``WORK_PARENT/<dataset>/...`` of every dataset and prints one table in the
papers' layout: a row per method in the papers' order, a column per
dataset, our mean test mAP with the paper's number in parentheses.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.reproduce_table work_dirs/reproduce/voc \\
        --dataset voc --methods full an grloss em em_apl lasd opml
    python -m benchmark.reproduce_table work_dirs/reproduce --layout
"""
import argparse
import glob
import os.path as osp
import re
from typing import Dict, List

from spml_mm.apis import get_method

from benchmark.pages.accuracy import summarize
from benchmark.pages.results import paper_datasets, paper_results

#: config folder of reproduce.sh -> the table row it gives (OPML's ResNet-50
#: configs are the full OPML-SP recipe)
KEYS = {'opml': 'opml_sp'}
#: labels of the reproduce.sh runs that are AN's config with another loss
#: (no method card of their own)
LABELS = {
    'an_ls': 'AN-LS',
    'wan': 'WAN',
    'hill': 'Hill',
    'splc': 'SPLC',
}
SCRIPT = osp.join(osp.dirname(osp.abspath(__file__)), 'reproduce.sh')


def script_methods() -> List[str]:
    """The runs of reproduce.sh by default, in the papers' row order (its
    ``METHODS``: the script is their one home)."""
    with open(SCRIPT) as f:
        return re.search(r'^METHODS=\$\{METHODS:-([^}]*)\}', f.read(),
                         re.M).group(1).split()


def label_of(key: str) -> str:
    """The table label of a reproduce.sh run or a method key."""
    key = KEYS.get(key, key)
    return LABELS[key] if key in LABELS else get_method(key).label


def read_runs(work_root: str, methods: List[str]) -> Dict[str, dict]:
    """Test mAP and training seconds of every finished run, in the form of
    accuracy.py's results: {method key: {seed: {mAP, seconds}}}."""
    results = {}
    for method in methods:
        for work in sorted(glob.glob(osp.join(work_root, method, 'seed*'))):
            log = osp.join(work, 'test.log')
            if not osp.isfile(log):
                continue
            with open(log) as f:
                found = re.findall(r'Epoch\(test\).*?spml/mAP: ([\d.]+)',
                                   f.read())
            if not found:
                continue
            seconds = float('nan')
            if osp.isfile(osp.join(work, 'train_seconds')):
                with open(osp.join(work, 'train_seconds')) as f:
                    seconds = float(f.read())
            results.setdefault(KEYS.get(method, method), {})[
                osp.basename(work)[len('seed'):]] = dict(
                    mAP=float(found[-1]), seconds=seconds)
    return results


def table(rows: Dict[str, dict], dataset: str) -> str:
    paper = paper_results(dataset)
    lines = [
        '| method | test mAP (%) | spread (std) | seeds | share of AN-to-full '
        'gap closed | training time (s) | paper |',
        '| --- | --- | --- | --- | --- | --- | --- |'
    ]
    for key, row in rows.items():
        label = label_of(key)
        gap = row.get('gap_closed')
        gap = '-' if gap is None else f'{100 * gap:.0f}%'
        reference = paper.get(label)
        lines.append(
            f'| {label} | {row["mean"]:.2f} | {row["std"]:.2f} | {row["n"]} '
            f'| {gap} | {row["seconds"]:.0f} | '
            f'{"-" if reference is None else f"{reference:.2f}"} |')
    return '\n'.join(lines)


def layout_table(work_parent: str, methods: List[str]) -> str:
    """Every dataset's runs in the papers' layout: ``ours (paper)`` cells,
    ``-`` where there is no run or no published number."""
    lines = [
        '| method | ' + ' | '.join(paper_datasets().values()) + ' |',
        '| --- |' + ' --- |' * len(paper_datasets())
    ]
    cells = {key: [] for key in methods}
    for dataset in paper_datasets():
        paper = paper_results(dataset)
        rows = summarize(
            read_runs(osp.join(work_parent, dataset), methods),
            [KEYS.get(m, m) for m in methods])
        for key in methods:
            row = rows.get(KEYS.get(key, key))
            ours = '-' if row is None else f'{row["mean"]:.2f}'
            reference = paper.get(label_of(key))
            cells[key].append(
                ours if reference is None else f'{ours} ({reference:.2f})')
    for key in methods:
        lines.append(f'| {label_of(key)} | ' + ' | '.join(cells[key]) + ' |')
    return '\n'.join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('work_root',
                        help='a dataset\'s work root; with --layout, the '
                        'folder of the datasets\' work roots')
    parser.add_argument('--dataset', choices=list(paper_datasets()))
    parser.add_argument('--methods', nargs='+',
                        help='config folders as reproduce.sh names them '
                        '(default with --layout: every row of the papers)')
    parser.add_argument('--layout', action='store_true',
                        help="every dataset, in the papers' layout")
    args = parser.parse_args()
    if args.layout:
        print("ResNet-50, test mAP of the best validation epoch, ours (the "
              f"paper's) ({args.work_root})\n")
        print(layout_table(args.work_root, args.methods or script_methods()))
        return
    if not args.dataset or not args.methods:
        parser.error('--dataset and --methods are required without --layout')
    results = read_runs(args.work_root, args.methods)
    keys = [KEYS.get(m, m) for m in args.methods]
    rows = summarize(results, keys)
    print(f'{paper_datasets()[args.dataset]}, ResNet-50, test mAP of the best '
          f'validation epoch ({args.work_root})\n')
    print(table(rows, args.dataset) if rows else 'No finished runs yet.')


if __name__ == '__main__':
    main()
