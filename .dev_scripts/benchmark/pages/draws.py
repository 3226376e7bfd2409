"""The page of ``benchmark.draws`` (``docs/results/draws.md``): test mAP
and the label-set calibrations when the single positive is chosen by a
rule rather than drawn uniformly, one section per suite."""
import numpy as np

from spml_mm.apis import list_methods
from spml_mm.datasets.protocol import OBSERVE_RULES

#: The methods compared, in the page's order: the baseline, the seed
#: methods (their folders' rows) and the first teacher method, by their cards.
METHODS = ('an', *list_methods(kind='seed'), list_methods(kind='teacher')[0])
#: The rules compared with the uniform draw.
DRAWS = OBSERVE_RULES[1:]
#: The miss rate of the conformal thresholds measured.
ALPHA = 0.2

INTRO = (
    'Each training image keeps one positive: drawn uniformly among its labels '
    '(the papers\' protocol) or chosen by a rule of the protocol (the '
    'datasets\' `observe`): `commonest`, its label of the class most '
    'frequent in the split; `rarest`, of the least frequent; `largest`, of '
    'its largest object. Every rule keeps the uniform draw\'s negatives '
    '(none here) and changes only which positive an image observes; the '
    'validation and test labels are the same. Per suite: the test mAP of '
    'each method and draw (the change from the uniform draw in brackets), '
    'and what the label-set calibrations give on the validation split '
    'observed under each draw: m, the mean number of labels per image (true '
    '/ estimated by `estimate_positives_per_image`); the class priors '
    '`class_priors` derives from the observed positives with the true m '
    '(mean absolute error, points: it reads the observed positives alone, '
    'so it is the same for every method); the fewest observed positives of '
    f'a class; conformal thresholds at alpha {ALPHA:g}, one per class and '
    'one pooled over the classes (`--method conformal` and `global` of '
    '`tools/calibrate.py`): the recall they reach on every test positive '
    'and on the test positives the draw chooses (one per image, as it '
    'chose the validation images\' observed ones: the positives the '
    f'guarantee, a recall of at least {100 * (1 - ALPHA):.0f}%, is about), '
    'and the per-class thresholds\' recall on their worst class. A '
    'calibration that needs more observed positives of a class than the '
    'validation split holds is refused (the estimate of m one of each '
    'class, the per-class thresholds four).')


def runs_of(rows, method, draw):
    """A method's runs under a draw, by seed."""
    return {r['seed']: r for r in rows.values()
            if r['method'] == method and r['draw'] == draw}


def changes(rows, method, draw):
    """The change of test mAP from the uniform draw, seed by seed (the
    seeds that ran both)."""
    uniform, runs = runs_of(rows, method, 'uniform'), runs_of(
        rows, method, draw)
    return [runs[s]['mAP'] - uniform[s]['mAP'] for s in sorted(runs)
            if s in uniform]


def map_lines(rows, draws):
    lines = [
        '| method | ' + ' | '.join(draws) + ' |',
        '| --- |' + ' --- |' * len(draws),
    ]
    for method in METHODS:
        if not runs_of(rows, method, 'uniform') and not any(
                runs_of(rows, method, d) for d in draws):
            continue
        cells = []
        for draw in draws:
            runs = runs_of(rows, method, draw)
            if not runs:
                cells.append('-')
                continue
            label = next(iter(runs.values()))['label']
            text = f'{np.mean([r["mAP"] for r in runs.values()]):.2f}'
            change = changes(rows, method, draw)
            if draw != 'uniform' and change:
                text += f' ({np.mean(change):+.2f})'
            cells.append(text)
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    return lines


def percent(row, key):
    return f'{row[key]:.1f}%'


def calibration_lines(suite, draws):
    lines = [
        '| method | draw | m true | m estimated | prior error | fewest '
        'observed | conformal recall: all / chosen | worst class | pooled '
        'recall: all / chosen |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ]
    for method in METHODS:
        for draw in draws:
            row = suite['rows'].get(f'{draw}/{method}/{suite["seeds"][0]}')
            if not row or 'm_true' not in row:
                continue
            if 'conformal_recall' in row:
                conformal = (f'{percent(row, "conformal_recall")} / '
                             f'{percent(row, "conformal_chosen_recall")} | '
                             f'{percent(row, "conformal_min_class_recall")}')
            else:
                conformal = f'refused: {row["conformal_refused"]} | -'
            m_est = f'{row["m_est"]:.2f}' if 'm_est' in row else \
                f'refused: {row["m_refused"]}'
            lines.append(
                f'| {row["label"]} | {draw} | {row["m_true"]:.2f} | '
                f'{m_est} | {row["prior_error"]:.2f} | '
                f'{row["observed_min_class"]} | {conformal} | '
                f'{percent(row, "pooled_recall")} / '
                f'{percent(row, "pooled_chosen_recall")} |')
    return lines


def spread(values):
    """The range of ``values`` (signed), with their mean when several."""
    low, high = min(values), max(values)
    text = f'{low:+.2f}' if low == high else f'{low:+.2f} to {high:+.2f}'
    return text if len(values) == 1 else \
        f'{text} (mean {np.mean(values):+.2f})'


def mean_of(rows, key, digits=2):
    """The mean of ``key`` over the rows that have it, or ``refused``."""
    values = [r[key] for r in rows if key in r]
    return f'{np.mean(values):.{digits}f}' if values else 'refused'


def summary_lines(suite, draws):
    """What each rule did against the uniform draw, from the rows: the
    change of mAP over the methods that ran both, and the calibrations
    (m estimated and conformal recall: means over those methods)."""
    rows, seed = suite['rows'], suite['seeds'][0]
    lines = []
    for draw in draws[1:]:
        per_method = {m: changes(rows, m, draw) for m in METHODS}
        per_method = {m: c for m, c in per_method.items() if c}
        if not per_method:
            continue
        text = (f'- `{draw}`: test mAP '
                f'{spread([np.mean(c) for c in per_method.values()])} points '
                'against the uniform draw (' + ', '.join(
                    next(iter(runs_of(rows, m, draw).values()))['label']
                    for m in per_method) + ')')
        every = sum(per_method.values(), [])
        if len(every) > len(per_method):  # several seeds
            text += (f', {min(every):+.2f} to {max(every):+.2f} run by run '
                     f'({len(every)} runs)')
        pairs = [(rows[f'uniform/{m}/{seed}'], rows[f'{draw}/{m}/{seed}'])
                 for m in METHODS if f'uniform/{m}/{seed}' in rows
                 and f'{draw}/{m}/{seed}' in rows]
        pairs = [(a, b) for a, b in pairs if 'm_true' in a and 'm_true' in b]
        if pairs:
            uni, rule = zip(*pairs)
            text += (
                (f'; seed {seed}: ' if len(suite['seeds']) > 1 else '; ') +
                f'class-prior error {uni[0]["prior_error"]:.2f} -> '
                f'{rule[0]["prior_error"]:.2f} points; fewest observed '
                f'positives of a class {uni[0]["observed_min_class"]} -> '
                f'{rule[0]["observed_min_class"]}; m estimated '
                f'{mean_of(uni, "m_est")} -> {mean_of(rule, "m_est")} (true '
                f'{uni[0]["m_true"]:.2f})')
            text += (f'; pooled conformal recall on all test positives '
                     f'{mean_of(uni, "pooled_recall", 1)}% -> '
                     f'{mean_of(rule, "pooled_recall", 1)}%, on the chosen '
                     f'ones {mean_of(uni, "pooled_chosen_recall", 1)}% -> '
                     f'{mean_of(rule, "pooled_chosen_recall", 1)}%')
            both = [(a, b) for a, b in pairs
                    if 'conformal_recall' in a and 'conformal_recall' in b]
            if both:
                uni, rule = zip(*both)
                text += (
                    f'; per-class conformal recall on all test positives '
                    f'{mean_of(uni, "conformal_recall", 1)}% -> '
                    f'{mean_of(rule, "conformal_recall", 1)}%, on the '
                    f'chosen ones '
                    f'{mean_of(uni, "conformal_chosen_recall", 1)}% -> '
                    f'{mean_of(rule, "conformal_chosen_recall", 1)}%, on '
                    f'the worst class '
                    f'{mean_of(uni, "conformal_min_class_recall", 1)}% -> '
                    f'{mean_of(rule, "conformal_min_class_recall", 1)}%')
        lines.append(text + '.')
    return lines


def suite_section(suite):
    rows = list(suite['rows'].values())
    draws = [d for d in ('uniform', *DRAWS) if any(r['draw'] == d
                                                   for r in rows)]
    lines = [
        f'## {suite["title"]}',
        '',
        f'Seed(s) {", ".join(map(str, suite["seeds"]))}; {suite["note"]}',
        '',
        '### Test mAP',
        '',
        *(['Mean over the seeds, the change from the uniform draw over '
           'the seeds that ran both.', ''] if len(suite['seeds']) > 1
          else []),
        *map_lines(suite['rows'], draws),
        '',
        '### Label-set calibrations',
        '',
        *([f'Seed {suite["seeds"][0]}\'s runs.', '']
          if len(suite['seeds']) > 1 else []),
        *calibration_lines(suite, draws),
    ]
    summary = summary_lines(suite, draws)
    if summary or suite.get('conclusion'):
        lines += ['', '### What the draws did', '', *summary]
        if suite.get('conclusion'):
            lines += ['', suite['conclusion']]
    return lines


def render(data):
    """The page: per suite (the demo first), mAP per method and draw, the
    calibrations and what each rule changed."""
    lines = [
        '# Single positives chosen not uniformly',
        '',
        '<!-- written by benchmark.draws from draws.json; do not edit -->',
        '',
        INTRO,
    ]
    for name in sorted(data['suites'], key=lambda n: (n != 'demo', n)):
        lines += [''] + suite_section(data['suites'][name])
    return '\n'.join(lines) + '\n'
