"""Per-epoch pseudo-label accuracy and counts of a training run.

Reads the lines ``Pseudo-labels after epoch E: key: value, ...`` that
``SPMLPseudoLabelHook`` writes to the text log of a work dir
(``<work_dir>/<timestamp>/<timestamp>.log``; a resumed run's later logs
override earlier epochs) and plots, per epoch, the accuracy of the negative
and positive pseudo-labels against the true labels (``pseudo_*_acc``, the
EM paper's Table 4; OPML's ``mean_train_ap`` too) and their numbers
(``pseudo_negatives``, ``pseudo_positives``).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m analysis.pseudo_label_curve work_dirs/em_apl \\
        --out pseudo_labels.png
"""
import argparse
import glob
import os.path as osp
import re
from typing import Dict, List

LINE = re.compile(r'Pseudo-labels after epoch (\d+): (.*?) \(')
PAIR = re.compile(r'(\w+): ([-\d.]+)')
COUNTS = ('pseudo_negatives', 'pseudo_positives')


def log_files(source: str) -> List[str]:
    if osp.isfile(source):
        return [source]
    files = sorted(glob.glob(osp.join(source, '*', '*.log')))
    if not files:
        raise FileNotFoundError(f'no <timestamp>/<timestamp>.log in {source}')
    return files


def read_curves(source: str) -> Dict[str, Dict[int, float]]:
    """``{key: {epoch: value}}`` of every pseudo-label line of a work dir
    (or one log file)."""
    curves: Dict[str, Dict[int, float]] = {}
    for path in log_files(source):
        with open(path) as f:
            for found in LINE.finditer(f.read()):
                epoch = int(found.group(1))
                for key, value in PAIR.findall(found.group(2)):
                    curves.setdefault(key, {})[epoch] = float(value)
    if not curves:
        raise ValueError(
            f'{source} has no "Pseudo-labels after epoch" lines: was '
            'SPMLPseudoLabelHook in the config, and did training pass its '
            'warmup_epochs?')
    return curves


def plot(runs: Dict[str, Dict[str, Dict[int, float]]], out: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    fig, (acc, num) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, curves in runs.items():
        for key, curve in curves.items():
            epochs = sorted(curve)
            values = [curve[e] for e in epochs]
            label = f'{name}: {key}' if len(runs) > 1 else key
            if key.endswith('_acc') or key.endswith('_ap'):
                acc.plot(epochs, values, 'o-', label=label)
            elif key in COUNTS:
                num.plot(epochs, values, 'o-', label=label)
    acc.set_ylabel('% (against the true labels)')
    acc.set_title('pseudo-label accuracy')
    num.set_ylabel('pseudo-labels in the bank')
    num.set_title('pseudo-label count')
    for ax in (acc, num):
        ax.set_xlabel('epoch')
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('sources', nargs='+', help='work dirs or log files')
    parser.add_argument('--names', nargs='+')
    parser.add_argument('--out', default='pseudo_labels.png')
    args = parser.parse_args(argv)
    names = args.names or [osp.basename(osp.normpath(s))
                           for s in args.sources]
    if len(names) != len(args.sources):
        parser.error('give one name per source')
    runs = {name: read_curves(s) for name, s in zip(names, args.sources)}
    for name, curves in runs.items():
        keys = sorted(curves)
        print(f'{name}\n| epoch | ' + ' | '.join(keys) + ' |\n|' +
              ' --- |' * (len(keys) + 1))
        for epoch in sorted({e for c in curves.values() for e in c}):
            print(f'| {epoch} | ' + ' | '.join(
                f'{curves[k][epoch]:g}' if epoch in curves[k] else '-'
                for k in keys) + ' |')
    plot(runs, args.out)
    print(f'wrote {args.out}')
    return runs


if __name__ == '__main__':
    main()
