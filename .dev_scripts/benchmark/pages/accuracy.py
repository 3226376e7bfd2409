"""The accuracy pages (``benchmark.accuracy``): the seeds table with
its plot, and the learning-rate search's table."""
import os.path as osp

import numpy as np

from benchmark.suites import (METHODS, SUITE_TITLES, label_of,
                              suite_config)
from benchmark.common import machine_summary


def summarize(results, methods):
    """Mean, spread and the share of the AN-to-full gap per method."""
    rows = {}
    for name in methods:
        runs = results.get(name, {})
        if runs:
            maps = np.array([r['mAP'] for r in runs.values()])
            secs = np.array([r['seconds'] for r in runs.values()])
            rows[name] = dict(mean=maps.mean(), std=maps.std(),
                              n=len(maps), seconds=secs.mean())
    if 'an' in rows and 'full' in rows:
        gap = rows['full']['mean'] - rows['an']['mean']
        for row in rows.values():
            row['gap_closed'] = (row['mean'] - rows['an']['mean']) / gap
    return rows


def chosen_lrs(found):
    """Per method, the searched learning rate of the best validation mAP."""
    return {method: float(max(runs, key=lambda lr: runs[lr]['val_mAP']))
            for method, runs in found.items() if runs}


def grid_position(runs):
    """Where a method's chosen rate lies among the rates of its search
    (``runs``: rate -> run): ``'interior'``, ``'top edge'`` or ``'bottom
    edge'`` (the highest or lowest searched: a better rate may lie past
    it), or ``'one rate'``."""
    rates = sorted(float(lr) for lr in runs)
    if len(rates) < 2:
        return 'one rate'
    best = float(max(runs, key=lambda lr: runs[lr]['val_mAP']))
    return ('top edge' if best == rates[-1] else
            'bottom edge' if best == rates[0] else 'interior')


def compile_options(entry):
    """The ``compile`` options a recorded run trained with (none: it
    trained eagerly)."""
    return [o for o in entry.get('options', []) if o.startswith('compile')]


def seeds_table(rows, before=None):
    """The table's lines; ``before`` (label, rows of an earlier run) adds
    its mean and std and the change of the mean per method."""
    extra = ' {} (%) | change |'.format(before[0]) if before else ''
    lines = [
        '| method | test mAP (%) | spread (std) | seeds | share of AN-to-full '
        f'gap closed | training time (s) |{extra}',
        '| --- ' * (6 + 2 * bool(before)) + '|'
    ]
    for name, row in rows.items():
        gap = row.get('gap_closed')
        gap = '-' if gap is None else f'{100 * gap:.0f}%'
        line = (f'| {label_of(name)} | {row["mean"]:.2f} | '
                f'{row["std"]:.2f} | {row["n"]} | {gap} | '
                f'{row["seconds"]:.0f} |')
        old = before[1].get(name) if before else None
        if old:
            line += (f' {old["mean"]:.2f} +- {old["std"]:.2f} | '
                     f'{row["mean"] - old["mean"]:+.2f} |')
        elif before:
            line += ' - | - |'
        lines.append(line)
    return lines


def run_notes(rows, runs, output):
    """The lines under the table: the learning rates the runs were given
    (``runs``: the results json) and how many trained compiled."""
    lines = []
    lrs = {name: {r['lr'] for r in results.values() if 'lr' in r}
           for name, results in (runs or {}).items()}
    chosen = [f'{label_of(n)} {", ".join(f"{lr:g}" for lr in sorted(v))}'
              for n, v in lrs.items() if v and n in rows]
    if chosen:
        lines += ['', 'Learning rates, each method\'s best validation mAP '
                  f'of `{output}_lr_search.md`: ' + '; '.join(chosen) + '.']
    compiled = [r for results in (runs or {}).values()
                for r in results.values() if compile_options(r)]
    if compiled:
        modes = sorted({o for r in compiled for o in compile_options(r)})
        lines += ['', f'{len(compiled)} of '
                  f'{sum(len(v) for v in runs.values())} runs trained with '
                  'the train step compiled (' +
                  ', '.join(f'`{m}`' for m in modes) + '), the rest '
                  'eagerly: the same computation, rounded differently, which '
                  'a method that amplifies rounding follows like another '
                  'seed.']
    return lines


def plot(rows, path, title):
    """Each method's mean test mAP with its spread as a bar chart."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    names = list(rows)
    ax.bar([label_of(n).replace(' (upper bound)', '') for n in names],
           [rows[n]['mean'] for n in names],
           yerr=[rows[n]['std'] for n in names], capsize=4,
           color=['#888' if n in ('an', 'full') else '#3a7' for n in names])
    low = min(rows[n]['mean'] - rows[n]['std'] for n in names)
    ax.set_ylim(max(0, low - 5), 100)
    ax.set_ylabel('test mAP (%)')
    ax.set_title(f'SPML methods, {title} (mean and std over '
                 'seeds)')
    plt.setp(ax.get_xticklabels(), rotation=20, ha='right')
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(rows, out_dir, command, quick, before=None, suite='demo',
                  output='accuracy', title=None, runs=None,
                  select_metric='spml/mAP'):
    """The table, plot and page; ``before`` (rows of an earlier run) adds
    its mean and std and the change of the mean per method. ``suite`` (or
    ``title``) names the data in the text, ``output`` the output files;
    ``runs`` (the results json) adds the learning rates runs were given;
    ``select_metric`` is the validation metric that chose the epoch."""
    title = title or SUITE_TITLES[suite]
    note = (' (quick mode: 2 epochs on 96 images, validated on 200 and '
            'tested on 500; not meaningful)') if quick else ''
    md = '\n'.join([
        f'{title}, test mAP of the best validation epoch (on '
        f'`{select_metric}`){note}; '
        'mean and population standard deviation over the seeds.', '',
        *seeds_table(rows, before), *run_notes(rows, runs, output), '',
        f'Command: `{command}`', '', f'Machine: {machine_summary()}', '',
        f'![accuracy]({output}.png)', ''
    ])
    with open(osp.join(out_dir, f'{output}.md'), 'w') as f:
        f.write(md)
    plot(rows, osp.join(out_dir, f'{output}.png'), title)
    print(md)


def lr_search_table(found, suite, regime):
    """The lines of the learning-rate table from ``<name>_lr_search.json``
    (``found``): every method and rate of the json, since invocations run
    side by side (one per method, each with its optimizer's grid) share
    one table; the last column says whether the chosen rate is interior."""
    rates = sorted({float(lr) for runs in found.values() for lr in runs})
    lines = ['| method | config | ' + ' | '.join(
        f'lr {lr:g}' for lr in rates) + ' | chosen | in the grid |',
             '| --- ' * (len(rates) + 4) + '|']
    for method in [m for m in METHODS if m in found]:
        runs = found[method]
        cells = [runs.get(f'{lr:g}', {}).get('val_mAP') for lr in rates]
        lines.append(f'| {label_of(method)} | '
                     f'`{suite_config(suite, method, regime)}` | ' +
                     ' | '.join('-' if c is None else f'{c:.2f}'
                                for c in cells) +
                     f' | {chosen_lrs(found)[method]:g} | '
                     f'{grid_position(runs)} |')
    return lines


def write_lr_search_page(found, out_dir, name, title, suite, regime, seed,
                         select_metric, command):
    """``<name>_lr_search.md`` of a rate search's results json ``found``,
    each method's best rate marked."""
    tested = any('test_mAP' in r for runs in found.values()
                 for r in runs.values())
    md = '\n'.join([
        f'{title}, {regime} regime: best validation '
        f'`{select_metric}` over the epochs per learning rate (seed '
        f'{seed}; ' + ('the test set does not choose the rate; where a '
                       'search run was tested, the chosen rate\'s run is '
                       f'seed {seed} of the seeds table).' if tested else
                       'the test set is not used).'), '',
        *lr_search_table(found, suite, regime), '',
        'In the grid: the chosen rate is interior, or the highest (top '
        'edge) or lowest (bottom edge) searched, where a better rate may '
        'lie past it.', '',
        f'Command: `{command}`', '',
        f'Machine: {machine_summary()}', ''
    ])
    with open(osp.join(out_dir, f'{name}_lr_search.md'), 'w') as f:
        f.write(md)
    print(md)
