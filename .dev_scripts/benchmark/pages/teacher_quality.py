"""The teacher-quality page (``benchmark.teacher_quality``): test
mAP of the teacher methods against their synthetic teachers' mAP, beside
the methods without a teacher, and the real teacher's section."""
import os.path as osp

import numpy as np

from benchmark.suites import (TEACHER_BASELINES, TEACHER_METHODS,
                              label_of)
from benchmark.common import machine_summary


def summarize_runs(runs):
    """Mean, std and number of the test mAPs of runs keyed by seed."""
    values = [r['mAP'] for r in runs.values()]
    return dict(mean=float(np.mean(values)), std=float(np.std(values)),
                n=len(values))


def summarize(results):
    """Mean and std of the test mAP per method and level."""
    stats = summarize_runs
    rows = dict(baselines={
        m: stats(results[m]) for m in TEACHER_BASELINES if results.get(m)
    })
    rows['teachers'] = {}
    for method in TEACHER_METHODS:
        for level, runs in sorted(results.get(method, {}).items(),
                                  key=lambda kv: -float(kv[0])):
            rows['teachers'].setdefault(method, {})[level] = dict(
                stats(runs), teacher_mAP=results['teachers'][level])
    return rows


def on_curve(levels, teacher_map):
    """A method's mean test mAP with a synthetic teacher of mAP
    ``teacher_map``, linear between the measured levels."""
    points = sorted((v['teacher_mAP'], v['mean']) for v in levels.values())
    return float(np.interp(teacher_map, *zip(*points)))


def real_teacher_lines(real, real_rows, synthetic, teacher_maps, best_name,
                       best):
    """The page's section on the real teacher."""
    below = [lv for lv, t in teacher_maps.items() if t <= real['mAP']]
    above = [lv for lv, t in teacher_maps.items() if t > real['mAP']]
    between = ' and '.join(
        f'noise {lv} (teacher mAP {teacher_maps[lv]:.2f})' for lv in (
            [max(below, key=teacher_maps.get)] if below else []) + (
            [min(above, key=teacher_maps.get)] if above else []))
    lines = [
        '', '## A real teacher', '',
        f'Written by `{real["command"]}`.', '',
        'The teacher is a model trained here: the full-label linear model '
        f'(`{real["config"]}`, every true label) trained on a second '
        f'instance of the proxy, made with generator seed '
        f'{real["data_seed"]} at the same fraction (the same classes; other '
        'images and scenes; the seed also deals the class frequencies '
        "anew), then scoring this proxy's training images with its sigmoid "
        '(`tools/score_teacher.py --source model`). Its mAP on those images '
        f"is {real['mAP']:.2f} (on its own instance's test split "
        f"{real['own_test_mAP']:.2f}), between the synthetic teachers of "
        f'{between}. On cached features no crops can be scored: AEVLP\'s '
        "DAMP reads each image's whole-image scores as its one crop, so its "
        'pseudo-labels are those of the whole image. The scores are '
        "sigmoids, not a softmax over classes like CLIP's and the synthetic "
        "teachers', and the configs' thresholds (set for a softmax) cut "
        'them unchanged.', '',
        '| method | test mAP | seeds | a synthetic teacher of that mAP |',
        '| --- | --- | --- | --- |'
    ]
    for m, v in real_rows.items():
        lines.append(
            f'| {label_of(m)} | {v["mean"]:.2f} +- {v["std"]:.2f} | '
            f'{v["n"]} | {on_curve(synthetic[m], real["mAP"]):.2f} |')
    lines += ['', 'The last column is the synthetic curve at the real '
              "teacher's mAP (linear between the measured levels). The best "
              f'method without a teacher, {label_of(best_name)}, has '
              f'{best:.2f}: ' + '; '.join(
                  f'{label_of(m)} with the real teacher is '
                  f'{v["mean"] - best:+.2f} from it'
                  for m, v in real_rows.items()) + '.']
    gains = {m: v['mean'] - on_curve(synthetic[m], real['mAP'])
             for m, v in real_rows.items()}
    if all(g > 0 for g in gains.values()):
        lines += ['', 'Every method gains more from the real teacher than '
                  'from a synthetic teacher of the same mAP: its mAP alone '
                  'does not place a teacher on the curve. Its errors are '
                  "a model's, not uniform noise, its scores are another "
                  "form, and it brings what it learned from the other "
                  "instance's labelled images."]
    return lines


def crossing(levels, best):
    """Teacher mAP where a method's mean test mAP first reaches ``best``,
    linear between levels sorted by teacher mAP; None if it never does."""
    points = sorted((v['teacher_mAP'], v['mean']) for v in levels.values())
    for (t0, m0), (t1, m1) in zip(points, points[1:]):
        if m0 >= best:
            return t0
        if m1 >= best:
            return t0 + (best - m0) * (t1 - t0) / (m1 - m0)
    return points[0][0] if points and points[0][1] >= best else None


def sweep_lines(rows, results, command, fraction):
    """The page up to the crossing points: the setting, the methods
    without a teacher and the synthetic teachers' table."""
    ceiling = 'accuracy_proxy-voc_linear{}.md'.format(
        '' if fraction == 1 else f'-f{fraction:g}')
    lines = [
        '# How good must a teacher be?', '',
        f'Written by `{command}`; {machine_summary()}', '',
        f'VOC-like proxy at {fraction:g} of its size, linear regime (frozen '
        'EfficientNet-Lite0 features, the configs '
        '`configs/*/efficientnet-lite0-linear_proxy-voc.py`), '
        'test mAP (%) of the best validation epoch, mean +- std over seeds. '
        'The teachers are synthetic (spml_mm/benchmarks/synthetic_teacher.py'
        '): scores from the true labels with noise of a chosen level, as a '
        "softmax over classes like CLIP's, so the releases' thresholds "
        "apply; a teacher's quality is its own mAP on the training images. "
        'Methods: [docs/methods/teacher_pseudo_labels.md]'
        '(../methods/teacher_pseudo_labels.md). Training on every '
        'true label (the ceiling) on the same proxy: `full` in '
        f'[{ceiling}]({ceiling}).', '',
        '## Without a teacher', '', '| method | test mAP | seeds |',
        '| --- | --- | --- |'
    ]
    for m, v in rows['baselines'].items():
        lines.append(f'| {label_of(m)} | {v["mean"]:.2f} +- {v["std"]:.2f} | '
                     f'{v["n"]} |')
    lines += ['', '## With a teacher', '',
              '| noise | teacher mAP | ' + ' | '.join(
                  label_of(m) for m in rows['teachers']) + ' |',
              '| --- | --- |' + ' --- |' * len(rows['teachers'])]
    levels = sorted({lv for t in rows['teachers'].values() for lv in t},
                    key=lambda lv: -float(lv))
    for level in levels:
        cells = []
        for m, by_level in rows['teachers'].items():
            v = by_level.get(level)
            cells.append('' if v is None else
                         f'{v["mean"]:.2f} +- {v["std"]:.2f} ({v["n"]})')
        lines.append(f'| {float(level):g} | '
                     f'{results["teachers"][level]:.2f} | ' +
                     ' | '.join(cells) + ' |')
    return lines


def crossing_lines(rows, best_name, best):
    """Where each teacher method reaches the best method without one."""
    lines = ['', '## Where a teacher starts to pay', '',
             f'The best method without a teacher is {label_of(best_name)} '
             f'({best:.2f}). A teacher method reaches it from the teacher '
             'mAP below (linear between the measured levels):', '']
    for m, by_level in rows['teachers'].items():
        point = crossing(by_level, best)
        lines.append(f'- {label_of(m)}: ' + (
            'not reached at any measured level' if point is None else
            f'teacher mAP {point:.1f}'))
    return lines


def plot(rows, real, real_rows, path):
    """Each teacher method's test mAP against its teacher's mAP, the
    methods without a teacher as lines and the real teacher as stars."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    # teachers C0, C1; the methods without a teacher dashed, C2 onwards
    for i, (m, v) in enumerate(rows['baselines'].items()):
        ax.axhline(v['mean'], ls='--', lw=1, color=f'C{i + 2}',
                   label=f'{label_of(m)} (no teacher)')
    for i, (m, by_level) in enumerate(rows['teachers'].items()):
        pts = sorted((v['teacher_mAP'], v['mean'], v['std'])
                     for v in by_level.values())
        x, y, e = map(np.array, zip(*pts))
        ax.errorbar(x, y, yerr=e, marker='o', capsize=3, color=f'C{i}',
                    label=label_of(m))
        if m in real_rows:
            ax.errorbar(real['mAP'], real_rows[m]['mean'],
                        yerr=real_rows[m]['std'], marker='*', ms=12,
                        capsize=3, color=f'C{i}', ls='none',
                        label=f'{label_of(m)}, real teacher')
    ax.set_xlabel("teacher's mAP on the training images (%)")
    ax.set_ylabel('test mAP (%)')
    ax.set_title('VOC-like proxy, linear regime')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(results, out_dir, command, fraction):
    """``teacher_quality.md`` and ``teacher_quality.png`` of the study's
    json ``results``."""
    rows = summarize(results)
    baselines = rows['baselines']
    best_name = max(baselines, key=lambda m: baselines[m]['mean'])
    best = baselines[best_name]['mean']
    lines = sweep_lines(rows, results, command, fraction)
    lines += crossing_lines(rows, best_name, best)
    real = results.get('real_teacher', {})
    real_rows = {m: summarize_runs(real[m]) for m in TEACHER_METHODS
                 if real.get(m)}
    if 'mAP' in real:
        lines += real_teacher_lines(real, real_rows, rows['teachers'],
                                    results['teachers'], best_name, best)
    lines += ['', "![Test mAP against the teacher's mAP](teacher_quality.png)",
              '']
    with open(osp.join(out_dir, 'teacher_quality.md'), 'w') as f:
        f.write('\n'.join(lines))
    plot(rows, real, real_rows, osp.join(out_dir, 'teacher_quality.png'))
