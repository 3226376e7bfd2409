"""The model-selection page (``benchmark.selection``): the test mAP
each selection criterion's pick of rate and epoch gets, and the mAP lost
against selecting on full validation labels."""
import os.path as osp

import numpy as np

from benchmark.suites import label_of
from benchmark.common import machine_summary


def pick(runs, criterion, draw=None):
    """The (learning rate, epoch, values) ``criterion`` prefers among a
    method's runs of one seed (``runs``: lr -> epoch -> values); ``draw``
    names the draw of a criterion with several."""
    picks = [(lr, epoch, v) for lr, epochs in runs.items()
             for epoch, v in epochs.items()]
    if draw is None:
        return max(picks, key=lambda p: p[2][criterion])
    return max(picks, key=lambda p: p[2][criterion][draw])


def select(runs, criterion):
    """Test mAP of the (learning rate, epoch) ``criterion`` prefers among a
    method's runs of one seed (``runs``: lr -> epoch -> values); for a
    criterion with several draws, the mean over the draws."""
    values = next(iter(next(iter(runs.values())).values()))
    if not isinstance(values[criterion], list):
        return pick(runs, criterion)[2]['test']
    draws = len(values[criterion])
    return float(np.mean([pick(runs, criterion, d)[2]['test']
                          for d in range(draws)]))


def summarize(results, methods):
    """criterion -> method -> mean and std over the seeds of the selected
    test mAP, and of its loss against selecting on full validation labels
    (``results``: method -> seed -> lr -> epoch -> values)."""
    first = next(iter(next(iter(next(iter(results.values())).values()))
                      .values()))
    names = [name for name in next(iter(first.values())) if name != 'test']
    table = {}
    for criterion in names:
        table[criterion] = {}
        for method in methods:
            seeds = list(results.get(method, {}).values())
            if not seeds:
                continue
            got = np.array([select(runs, criterion) for runs in seeds])
            lost = np.array([select(runs, 'full') for runs in seeds]) - got
            table[criterion][method] = dict(
                mean=got.mean(), std=got.std(), lost=lost.mean(),
                lost_std=lost.std(), n=len(got))
    return table


def order(rows):
    """The methods from best to worst mean test mAP."""
    return ' > '.join(label_of(m) for m in sorted(
        rows, key=lambda m: -rows[m]['mean']))


def table_lines(table, labels=None):
    """The table of :func:`summarize`'s ``table``: per criterion (named by
    ``labels`` where given) each method's mean +- std and its change, the
    mean loss and the methods' order."""
    methods = list(table['full'])
    lines = [
        '| selected on | ' + ' | '.join(label_of(m) for m in methods) +
        ' | mean loss | methods\' order |',
        '| --- ' * (len(methods) + 3) + '|'
    ]
    for criterion, rows in table.items():
        cells = [f'{rows[m]["mean"]:.2f} +- {rows[m]["std"]:.2f} '
                 f'({-rows[m]["lost"] or 0.:+.2f})' for m in methods]
        mean_lost = np.mean([rows[m]['lost'] for m in methods])
        lines.append(f'| {(labels or {}).get(criterion, criterion)} | ' +
                     ' | '.join(cells) +
                     f' | {mean_lost:.2f} | {order(rows)} |')
    return lines


def write_page(table, out_dir, command, title):
    """``selection_table.md`` (the table, the methods' order per criterion) and
    ``selection.png`` (mAP lost against the fully labelled subset's
    size)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    methods = list(table['full'])
    lines = [
        f'{title}: test mAP (full labels) of the learning rate and epoch '
        'each criterion selects; mean +- std over the seeds, and the mAP '
        'lost against selecting on full validation labels.', '',
        *table_lines(table), '', f'Command: `{command}`', '',
        f'Machine: {machine_summary()}'
    ]
    with open(osp.join(out_dir, 'selection_table.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    sizes = sorted(int(c.split('-')[1]) for c in table if 'subset' in c)
    fig, ax = plt.subplots(figsize=(6, 4))
    for method in methods:
        lost = [table[f'subset-{n}'][method]['lost'] for n in sizes]
        ax.plot(sizes, lost, marker='o', label=label_of(method))
        ax.axhline(table['observed'][method]['lost'], ls=':', lw=0.8,
                   color=ax.lines[-1].get_color())
    ax.set_xscale('log')
    ax.minorticks_off()
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel('fully labelled validation images')
    ax.set_ylabel('test mAP lost against full validation labels')
    ax.set_title('dotted: selected on observed single positives')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(osp.join(out_dir, 'selection.png'), dpi=120)
    plt.close(fig)
