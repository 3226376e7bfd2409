"""The label-sets page (``benchmark.label_sets``): per suite, each
calibration's label sets against the 0.5 threshold and the oracle, the
conformal thresholds' recall, and what the numbers say."""
import numpy as np

from benchmark.suites import label_of

#: Fully labelled validation images of the F1 reference.
FULL_SUBSET = 100
#: The conformal targets checked on held-out observed positives.
ALPHAS = (0.1, 0.2)
#: Decisions in the tables' order: key -> column title.
DECISIONS = {
    '0.5': '0.5',
    'global_0.1': 'global, alpha 0.1',
    'conformal_0.1': 'conformal, alpha 0.1',
    'conformal_0.2': 'conformal, alpha 0.2',
    'prior': 'class prior',
    'prior_estimated': 'class prior, estimated',
    'topk': 'top-k',
    'f1_subset': f'F1 on {FULL_SUBSET} labelled val images',
    'f1_val': 'F1 on every labelled val image',
    'oracle': 'oracle (test F1)',
}
#: A CF1 gap (points) between 0.5 and the oracle too small to close.
NEAR = 5
#: The decisions that need m, the mean number of labels per image.
NEED_M = ('prior', 'topk')
#: The decisions chosen without any full label.
WITHOUT_FULL = ('global_0.1', 'conformal_0.1', 'conformal_0.2', 'prior',
                'prior_estimated', 'topk')
#: The estimate of m counts as close within this relative error (%).
CLOSE = 15


def fmt(value, digits=1):
    return '-' if value is None else f'{value:.{digits}f}'


def cell(row, metric):
    """A decision's value, or "refused" where its calibration refused."""
    return 'refused' if 'refused' in row else fmt(row[metric])


def suite_lines(suite):
    """One suite's section: its command, tables and conclusion."""
    lines = [f'## {suite["title"]}', '',
             f'`{suite["command"]}` on {suite["machine"]}; m = '
             f'{suite["positives_per_image"]:.2f}.', '']
    runs = suite['runs']
    first = next(iter(runs.values()))
    low, high = first['observed_per_class']
    lines += [f'Calibrated on {first["val_images"]} validation images, '
              f'{low} to {high} observed positives per class.', '']
    for metric in ('CF1', 'OF1'):
        extra = ['best without full labels', 'closed'] if metric == 'CF1' \
            else []
        head = ['method', 'mAP', *DECISIONS.values(), *extra]
        lines += [f'**{metric}**', '', '| ' + ' | '.join(head) + ' |',
                  '| --- ' * len(head) + '|']
        for method, run_ in runs.items():
            rows = run_['decisions']
            cells = [fmt(run_['mAP'])] + [cell(rows[k], metric)
                                          for k in DECISIONS]
            if extra:
                best = max((k for k in WITHOUT_FULL
                            if rows[k]['CF1'] is not None),
                           key=lambda k: rows[k]['CF1'])
                gap = rows[best]['gap_closed']
                cells += [DECISIONS[best],
                          fmt(None if gap is None else 100 * gap, 0)]
            lines.append(f'| {label_of(method)} | ' + ' | '.join(cells) +
                         ' |')
        lines.append('')
    shown = [*WITHOUT_FULL, 'f1_subset', 'f1_val']
    head = ['method'] + [DECISIONS[k] for k in shown]
    lines += ['**Share of the CF1 gap between 0.5 and the oracle closed** '
              '(%)', '', '| ' + ' | '.join(head) + ' |',
              '| --- ' * len(head) + '|']
    for method, run_ in runs.items():
        rows = run_['decisions']
        lines.append(f'| {label_of(method)} | ' + ' | '.join(
            'refused' if 'refused' in rows[k] else
            fmt(None if rows[k]['gap_closed'] is None else
                100 * rows[k]['gap_closed'], 0) for k in shown) + ' |')
    lines.append('')
    head = ['method'] + [f'alpha {a}: {w}' for a in ALPHAS
                         for w in ('held-out observed', 'all (CR)')]
    lines += ['**Conformal thresholds: recall reached on the test split** '
              '(target 1 - alpha)', '', '| ' + ' | '.join(head) + ' |',
              '| --- ' * len(head) + '|']
    for method, run_ in runs.items():
        rec = run_['conformal_recall']
        cells = [fmt(rec[str(a)][w]) for a in ALPHAS
                 for w in ('observed', 'all_positives')]
        lines.append(f'| {label_of(method)} | ' + ' | '.join(cells) + ' |')
    lines += [''] + estimate_lines(runs)
    return lines + ['', suite['conclusion'], '']


def signed(error):
    """A relative error (%) with its sign, a decimal below 10."""
    return f'{error:+.1f}' if abs(error) < 10 else f'{error:+.0f}'


def gap_cell(row):
    return 'refused' if 'refused' in row else fmt(
        None if row['gap_closed'] is None else 100 * row['gap_closed'], 0)


def estimate_lines(runs):
    """The table of the estimate of m and the class priors per method."""
    head = ['method', 'm (val)', 'estimated m', 'error (%)',
            'class priors: mean abs. error (points)',
            'classes at the bound (warned)',
            'observation bias (points)',
            'CF1 gap closed: data\'s m', 'CF1 gap closed: estimated priors']
    lines = ['**Estimated labels per image**: m and the class priors '
             'estimated from the validation scores and observed positives '
             '(top-bin mixture proportion estimation per class, m the sum '
             'of the priors), against the validation split\'s full labels; '
             '"at the bound": classes whose prior estimate reached C times '
             'their observed rate, which no label set allows to pass, so '
             'that `tools/calibrate.py` warns that m is too high; '
             '"observation bias": at the estimated priors\' thresholds, '
             'the recall of the observed positives minus that of all '
             'positives, averaged over the classes (0 if each image\'s '
             'observed positive were a uniform sample of the class\'s '
             'positives)',
             '', '| ' + ' | '.join(head) + ' |', '| --- ' * len(head) + '|']
    for method, run_ in runs.items():
        est, rows = run_['estimate'], run_['decisions']
        if 'refused' in est:
            lines.append(f'| {label_of(method)} | '
                         f'{est["positives_per_image"]:.2f} | refused | - | '
                         f'- | - | - | {gap_cell(rows["prior"])} | '
                         f'{gap_cell(rows["prior_estimated"])} |')
            continue
        lines.append(
            f'| {label_of(method)} | {est["positives_per_image"]:.2f} | '
            f'{est["estimated"]:.2f} | {signed(est["error"])} | '
            f'{est["prior_error"]:.1f} | {est["at_bound"]} | '
            f'{bias_cell(est)} | {gap_cell(rows["prior"])} | '
            f'{gap_cell(rows["prior_estimated"])} |')
    return lines


def bias_cell(estimate):
    """The observation bias, '-' where a run predates it."""
    bias = estimate.get('observed_recall_bias')
    return '-' if bias is None else signed(bias)


def real_lines(real):
    """The section on the estimate with ReaL's label sets."""
    head = ['scores: positives, negatives', 'mAP (100 classes)', 'm',
            'estimated m', 'error (%)',
            'class priors: mean abs. error (points)',
            'classes at the bound (warned)']
    lines = [
        '## The estimate of m on ImageNet-ReaL\'s label sets', '',
        f'`{real["command"]}` on {real["machine"]}.', '',
        f'The label sets ImageNet-ReaL gives the {real["images"]:,} '
        f'ImageNet validation images that have one ({real["classes"]} '
        f'classes, {real["multi_label"]:.1f}% of the images with more than '
        'one label): a cardinality distribution no one here generated. One '
        'observed positive per image drawn among its labels (seed '
        f'{real["seed"]}); scores simulated, positives ~ Beta(a, b), '
        'negatives ~ Beta(b, a).', '',
        '| ' + ' | '.join(head) + ' |', '| --- ' * len(head) + '|']
    for row in real['levels']:
        lines.append(
            f'| Beta({row["a"]}, {row["b"]}), Beta({row["b"]}, {row["a"]}) '
            f'| {row["mAP"]:.1f} | {row["positives_per_image"]:.3f} | '
            f'{row["estimated"]:.3f} | {signed(row["error"])} | '
            f'{row["prior_error"]:.2f} | {row["at_bound"]} |')
    close = [r for r in real['levels'] if abs(r['error']) <= CLOSE]
    text = (f'The estimate is within {CLOSE}% of m for {len(close)} of '
            f'{len(real["levels"])} score levels')
    if len(close) < len(real['levels']):
        worst = min(real['levels'], key=lambda r: r['mAP'])
        text += (f'; it overestimates m where the ranking is weak (mAP '
                 f'{worst["mAP"]:.1f}: {worst["estimated"]:.2f} for '
                 f'{worst["positives_per_image"]:.2f}): among 1,000 rare '
                 'classes (a prior of about 0.1% each) the top bin of a '
                 'class holds negatives unless the positives score above '
                 'nearly every negative, and every class\'s excess adds '
                 'up in the sum')
        if not any(r['at_bound'] for r in real['levels']
                   if abs(r['error']) > CLOSE):
            text += ('; no class reached the bound '
                     f'({real["classes"]} times its observed rate), so '
                     '`tools/calibrate.py` would not warn')
    return lines + ['', text + '.', '']


def ordered(results):
    """The suites of a page, the demo first."""
    suites = results['suites']
    return [suites[k] for k in sorted(suites, key=lambda k: k != 'demo')]


def render(results):
    """The page's Markdown from its json."""
    lines = [
        '# From scores to label sets: thresholds without full labels', '',
        'Label sets on the test split from the best validation checkpoint '
        'of each method (seed 0). The thresholds are chosen on the '
        'validation split with its observed labels only (one positive per '
        'image), except the last three columns: "F1 on labelled val '
        f'images" uses the full labels of {FULL_SUBSET} validation images, '
        '"F1 on every labelled val image" those of the whole split (the '
        'most a per-class threshold chosen on validation can reach), the '
        'oracle the test labels themselves. m, the mean number of labels '
        'per image that class-prior matching and top-k need, is the '
        'data\'s, except in "class prior, estimated" (the default of '
        '`tools/calibrate.py`), which estimates each class\'s prior from '
        'the validation scores and observed positives and predicts the '
        'class on it. Percent. "closed": the share of '
        'the CF1 gap between the '
        '0.5 threshold and the oracle that the best calibration without '
        'full labels closes. Recall of conformal thresholds: per class, '
        'averaged over the classes, on one observed positive per test image '
        '(the protocol\'s draw; held out, since the thresholds saw only '
        'validation images) and on all test positives (CR).', '',
        '![CF1 per method and calibration](label_sets.png)', '']
    for suite in ordered(results):
        lines += suite_lines(suite)
    if 'real' in results:
        lines += real_lines(results['real'])
    return '\n'.join(lines)


def conclusion(runs):
    """What the numbers say: the calibration to use by default."""
    gaps = {k: [r['decisions'][k]['gap_closed'] for r in runs.values()
                if r['decisions'][k]['gap_closed'] is not None]
            for k in WITHOUT_FULL}
    mean = {k: float(np.mean(v)) for k, v in gaps.items() if v}
    best = max(mean, key=mean.get)
    reached = {k: sum(g >= 0.75 for g in v) for k, v in gaps.items()}
    closes = [label_of(m) for m, r in runs.items()
              if r['decisions'][best]['gap_closed'] is not None
              and r['decisions'][best]['gap_closed'] < 0.75]
    misses = {a: [label_of(m) for m, r in runs.items()
                  if r['conformal_recall'][str(a)]['observed'] is not None
                  and abs(r['conformal_recall'][str(a)]['observed'] -
                          100 * (1 - a)) > 2] for a in ALPHAS}
    refused = {k: [label_of(m) for m, r in runs.items()
                   if 'refused' in r['decisions'][k]] for k in WITHOUT_FULL}
    text = (f'Across the {len(runs)} methods, {DECISIONS[best]} closes the '
            f'most of the CF1 gap without full labels on average '
            f'({100 * mean[best]:.0f}%; ' + ', '.join(
                f'{DECISIONS[k]} {100 * v:.0f}%' for k, v in mean.items()
                if k != best) + '), and closes at least three quarters of '
            f'it for {reached[best]} of {len(gaps[best])} methods')
    gaps_05 = {m: r['decisions']['oracle']['CF1'] -
               r['decisions']['0.5']['CF1'] for m, r in runs.items()}
    near = [f'{label_of(m)} {gaps_05[m]:.1f}' for m in runs
            if label_of(m) in closes and gaps_05[m] < NEAR]
    text += (f' (not for {", ".join(closes)}).' if closes else '.')
    if near:
        text += (' Of those, 0.5 was already within a few points of the '
                 'oracle for ' + ', '.join(near) + ' CF1 points: little '
                 'gap to close.')
    free = max((k for k in mean if k not in NEED_M), key=mean.get)
    if best in NEED_M:
        text += (f' Without m, {DECISIONS[free]} closes the most '
                 f'({100 * mean[free]:.0f}%).')
    if 'prior_estimated' in mean:
        errors = [r['estimate']['error'] for r in runs.values()
                  if 'error' in r['estimate']]
        high = [g for g in gaps['prior_estimated'] if g >= 0.85]
        text += (f' The estimate of m is within {CLOSE}% of the data\'s '
                 f'for {sum(abs(e) <= CLOSE for e in errors)} of '
                 f'{len(errors)} methods (error {min(errors):+.0f}% to '
                 f'{max(errors):+.0f}%); with the estimated priors, '
                 'class-prior matching '
                 f'closes at least 85% of the gap for {len(high)} of '
                 f'{len(gaps["prior_estimated"])} methods.')
        biases = [r['estimate'].get('observed_recall_bias')
                  for r in runs.values() if 'error' in r['estimate']]
        if None not in biases:
            text += (' Observed positives are not a uniform sample of '
                     'their class: at the estimated priors\' thresholds '
                     'their recall differs from all positives\' by '
                     f'{min(biases):+.1f} to {max(biases):+.1f} points '
                     f'(mean {np.mean(biases):+.1f}).')
    ceiling = {m: r['decisions']['f1_val']['gap_closed'] for m, r in
               runs.items() if 'f1_val' in r['decisions']}
    if ceiling:
        under = [label_of(m) for m, g in ceiling.items()
                 if g is not None and g < 0.85]
        text += (' Thresholds chosen for F1 on every fully labelled '
                 'validation image close at least 85% for '
                 f'{len(ceiling) - len(under)} of {len(ceiling)} methods' +
                 (f' (not for {", ".join(under)})' if under else '') + '.')
    for key, names in refused.items():
        if names:
            first = next(r for r in runs.values()
                         if 'refused' in r['decisions'][key])
            text += (f' {DECISIONS[key].capitalize()} refused for '
                     f'{len(names)} of {len(runs)} methods '
                     f'({", ".join(names)}): '
                     f'{first["decisions"][key]["refused"]}.')
    for alpha, names in misses.items():
        reached = [r['conformal_recall'][str(alpha)] for r in runs.values()]
        reached = [r for r in reached if r['observed'] is not None]
        if not reached:
            continue
        all_positives = np.mean([r['all_positives'] for r in reached])
        text += (f' Conformal at alpha {alpha} reaches its target recall '
                 f'{100 * (1 - alpha):.0f}% within 2 points on held-out '
                 'observed positives for '
                 f'{len(reached) - len(names)} of {len(reached)} methods' +
                 (f' (not for {", ".join(names)})' if names else '') +
                 f'; on all test positives its recall is {all_positives:.1f}'
                 '% on average.')
    return text


def plot(results, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    suites = ordered(results)
    keys = list(DECISIONS)
    width = 0.8 / len(keys)
    fig, axes = plt.subplots(len(suites), 1, squeeze=False, figsize=(
        max(8, 1.1 * max(len(s['runs']) for s in suites)), 3.6 * len(suites)))
    for ax, suite in zip(axes[:, 0], suites):
        runs = suite['runs']
        for i, key in enumerate(keys):
            ax.bar(np.arange(len(runs)) + i * width,
                   [np.nan if r['decisions'][key]['CF1'] is None else
                    r['decisions'][key]['CF1'] for r in runs.values()],
                   width, label=DECISIONS[key])
        ax.set_xticks(np.arange(len(runs)) + 0.4 - width / 2)
        ax.set_xticklabels([label_of(m) for m in runs], rotation=20,
                           ha='right')
        ax.set_ylabel('test CF1 (%)')
        ax.set_title(suite['title'], fontsize=9)
    axes[0, 0].legend(fontsize=7, loc='upper left', bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
