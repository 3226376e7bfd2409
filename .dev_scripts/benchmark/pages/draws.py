"""The page of ``benchmark.draws`` (``docs/results/draws.md``): test mAP
and the label-set calibrations when the single positive is chosen by a
rule rather than drawn uniformly."""
from spml_mm.apis import list_methods

#: The methods compared, in the page's order: the baseline, the seed
#: methods (their folders' rows) and the first teacher method, by their cards.
METHODS = ('an', *list_methods(kind='seed'), list_methods(kind='teacher')[0])
#: The rules compared with the uniform draw.
DRAWS = ('commonest', 'rarest')
#: The miss rate of the conformal thresholds measured.
ALPHA = 0.2


def render(data):
    """The page: mAP per method and draw, and the calibrations."""
    rows = list(data['rows'].values())
    draws = [d for d in ('uniform', *DRAWS)
             if any(r['draw'] == d for r in rows)]
    lines = [
        '# Single positives chosen not uniformly',
        '',
        '<!-- written by benchmark.draws from draws.json; do not edit -->',
        '',
        f'Demo dataset, seed(s) {", ".join(map(str, data["seeds"]))}; '
        f'{data["note"]}',
        '',
        '## Test mAP',
        '',
        '| method | ' + ' | '.join(draws) + ' |',
        '| --- |' + ' --- |' * len(draws),
    ]
    for method in METHODS:
        got = {r['draw']: r for r in rows if r['method'] == method}
        if not got:
            continue
        label = next(iter(got.values()))['label']
        cells = []
        for draw in draws:
            row = got.get(draw)
            if row is None:
                cells.append('-')
                continue
            text = f'{row["mAP"]:.2f}'
            if draw != 'uniform' and 'uniform' in got:
                text += f' ({row["mAP"] - got["uniform"]["mAP"]:+.2f})'
            cells.append(text)
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    lines += [
        '',
        '## Label-set calibrations',
        '',
        'On the validation split observed under each draw: m, the mean number '
        'of labels per image (true / estimated by `estimate_positives_per_'
        'image`); the class priors `class_priors` derives from the observed '
        'positives with the true m (mean absolute error, points); the fewest '
        'observed positives of a class; conformal '
        f'thresholds at alpha {ALPHA:g}: the recall they reach on every test '
        f'positive (target {100 * (1 - ALPHA):.0f}%) and on the worst class.',
        '',
        '| method | draw | m true | m estimated | prior error | fewest '
        'observed | conformal recall | worst class recall |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ]
    for method in METHODS:
        for draw in draws:
            row = data['rows'].get(f'{draw}/{method}/{data["seeds"][0]}')
            if not row or 'm_true' not in row:
                continue
            if 'conformal_recall' in row:
                conformal = (f'{row["conformal_recall"]:.1f}% | '
                             f'{row["conformal_min_class_recall"]:.1f}%')
            else:
                conformal = f'refused: {row["conformal_refused"]} | -'
            lines.append(
                f'| {row["label"]} | {draw} | {row["m_true"]:.2f} | '
                f'{row["m_est"]:.2f} | {row["prior_error"]:.2f} | '
                f'{row["observed_min_class"]} | {conformal} |')
    return '\n'.join(lines) + '\n'
