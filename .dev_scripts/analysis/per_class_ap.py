"""Per-class test AP of a method against a baseline (e.g. AN), as bars.

Each of METHOD and BASELINE is a work dir of ``tools/train.py`` (its best
checkpoint is run on the test set), a checkpoint, or a prediction dump of
``tools/test.py --out``. Classes are sorted by the method's gain; the title
gives both mAPs and how many classes gain.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m analysis.per_class_ap work_dirs/gr work_dirs/an \\
        --names GR AN --out per_class_ap.png
"""
import argparse
from typing import Dict

import numpy as np

from spml_mm.evaluation.metrics import average_precision_per_class
from analysis.loading import predictions


def compare(method: Dict[str, np.ndarray],
            baseline: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Per-class AP (in percent) of two prediction sets of one test set."""
    if not np.array_equal(method['labels'], baseline['labels']):
        raise ValueError('the two sources were not evaluated on the same '
                         'test set (their labels differ)')
    return dict(
        method=average_precision_per_class(method['scores'],
                                           method['labels']),
        baseline=average_precision_per_class(baseline['scores'],
                                             baseline['labels']),
        classes=method['classes'])


def plot(ap: Dict[str, np.ndarray], names, out: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    gain = ap['method'] - ap['baseline']
    order = np.argsort(-gain, kind='stable')
    x = np.arange(len(order))
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(6, 0.3 * len(x) + 2), 6), sharex=True,
        gridspec_kw=dict(height_ratios=[2, 1]))
    top.bar(x - 0.2, ap['method'][order], 0.4, label=names[0])
    top.bar(x + 0.2, ap['baseline'][order], 0.4, label=names[1],
            color='#999')
    top.set_ylabel('test AP (%)')
    top.legend(loc='lower left')
    top.set_title(
        f'{names[0]} {ap["method"].mean():.2f} vs {names[1]} '
        f'{ap["baseline"].mean():.2f} mAP; {int((gain > 0).sum())} of '
        f'{len(gain)} classes gain')
    bottom.bar(x, gain[order],
               color=np.where(gain[order] >= 0, '#3a7', '#c44'))
    bottom.axhline(0, color='k', lw=0.5)
    bottom.set_ylabel(f'{names[0]} - {names[1]}')
    bottom.set_xticks(x)
    bottom.set_xticklabels(ap['classes'][order], rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('method', help='work dir, checkpoint or .pkl dump')
    parser.add_argument('baseline', help='work dir, checkpoint or .pkl dump')
    parser.add_argument('--method-config', help='config of a checkpoint '
                        '(default: the one stored in it)')
    parser.add_argument('--baseline-config')
    parser.add_argument('--names', nargs=2, default=['method', 'AN'])
    parser.add_argument('--out', default='per_class_ap.png')
    args = parser.parse_args(argv)
    ap = compare(predictions(args.method, 'test', args.method_config),
                 predictions(args.baseline, 'test', args.baseline_config))
    plot(ap, args.names, args.out)
    print(f'| class | {args.names[0]} | {args.names[1]} |\n| --- | --- | '
          '--- |')
    for name, a, b in zip(ap['classes'], ap['method'], ap['baseline']):
        print(f'| {name} | {a:.2f} | {b:.2f} |')
    print(f'| mAP | {ap["method"].mean():.2f} | {ap["baseline"].mean():.2f} '
          f'|\nwrote {args.out}')
    return ap


if __name__ == '__main__':
    main()
