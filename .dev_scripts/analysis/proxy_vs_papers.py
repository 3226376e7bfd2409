"""Share of the AN-to-full gap each method closes, on benchmark runs beside
the papers' VOC and COCO tables.

For a method m the share is ``(mAP_m - mAP_AN) / (mAP_full - mAP_AN)``: 0 is
AN's level, 1 full labels'. Each run is an ``accuracy.py`` results json
(means over its seeds); the papers' numbers are ``docs/results/papers.json``.
Prints the table in Markdown and draws it as grouped bars.

Example:
    PYTHONPATH=.dev_scripts python -m analysis.proxy_vs_papers \\
        "docs/results/accuracy_proxy-voc_linear-f0.2.json=VOC-like, linear" \\
        --out docs/results/proxy_vs_papers.png
"""
import argparse
import json

from benchmark.pages.accuracy import summarize
from benchmark.pages.results import paper_results
from benchmark.suites import METHODS, PROXY_CONFIGS, label_of

#: the methods compared, in the order of the proxy suites
COMPARED = [m for m in PROXY_CONFIGS if m not in ('an', 'full')]


def run_shares(results):
    """{method: share of the gap} of an accuracy.py results dict."""
    rows = summarize(results, list(results))
    return {m: rows[m]['gap_closed'] for m in COMPARED if m in rows}


def paper_shares(dataset):
    """{method: share of the gap} of the papers' table for a dataset, as
    the share of a one-seed run with the papers' numbers."""
    paper = paper_results(dataset)
    return run_shares({
        m: {'0': dict(mAP=paper[label_of(m)], seconds=0.)}
        for m in METHODS if label_of(m) in paper})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('runs', nargs='+', metavar='JSON=LABEL',
                        help='an accuracy.py results json and its label')
    parser.add_argument('--out', required=True, help='the plot (.png)')
    args = parser.parse_args()
    series = {'paper, VOC': paper_shares('voc'),
              'paper, COCO': paper_shares('coco')}
    for spec in args.runs:
        path, label = spec.split('=', 1)
        with open(path) as f:
            series[label] = run_shares(json.load(f))

    labels = [label_of(m) for m in COMPARED]
    lines = ['| method | ' + ' | '.join(series) + ' |',
             '| --- ' * (len(series) + 1) + '|']
    for method, label in zip(COMPARED, labels):
        cells = [s.get(method) for s in series.values()]
        lines.append(f'| {label} | ' + ' | '.join(
            '-' if c is None else f'{100 * c:.0f}%' for c in cells) + ' |')
    print('\n'.join(lines))

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / len(series)
    for i, (name, shares) in enumerate(series.items()):
        x = np.arange(len(COMPARED)) + (i - (len(series) - 1) / 2) * width
        heights = [100 * shares.get(m, np.nan) for m in COMPARED]
        ax.bar(x, heights, width, label=name,
               hatch='//' if name.startswith('paper') else None)
    ax.axhline(0, color='k', lw=0.8)
    ax.axhline(100, color='k', lw=0.8, ls=':')
    ax.set_xticks(np.arange(len(COMPARED)), labels)
    ax.set_ylabel('share of AN-to-full gap closed (%)')
    ax.set_title('0% = AN, 100% = full labels (dotted); means over seeds')
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f'plot: {args.out}')


if __name__ == '__main__':
    main()
