"""The releases' agreement page
(``.dev_scripts/analysis/release_agreement.py``): VLPL's and AEVLP's losses and
pseudo-labels, and IGNORE's loss, CAM mask and thresholds, against the
releases' own functions."""
import json
import os
import os.path as osp


def write(results: dict, out: str, command: str) -> None:
    """``release_agreement.json`` and ``release_agreement.md`` under
    ``out``."""
    os.makedirs(out, exist_ok=True)
    with open(osp.join(out, 'release_agreement.json'), 'w') as f:
        json.dump(results, f, indent=1)
    lines = [
        '# VLPL, AEVLP and IGNORE: agreement with the releases\' own '
        'functions', '',
        f'Written by `{command}` from the releases at the commits below, on '
        'random float64 inputs (3 seeds per row, the largest difference '
        'shown). Gradients are with respect to the logits. Where we differ '
        'and why: [docs/methods/teacher_pseudo_labels.md]'
        '(../methods/teacher_pseudo_labels.md) (VLPL, AEVLP) and '
        '[docs/methods/ignore.md](../methods/ignore.md) (IGNORE).', ''
    ]
    for release, commit in results['commits'].items():
        lines.append(f'- {release}: `{commit}`')
    for key, title in (('vlpl', 'VLPL: `VLPLLoss` against `loss_EM_PL`'),
                       ('gpr', 'AEVLP: `GPRLoss` against `GPR_loss`')):
        lines += ['', f'## {title}', '',
                  '| setting | value, abs. | value, rel. | gradient, abs. | '
                  'gradient, rel. to its largest entry |',
                  '| --- | --- | --- | --- | --- |']
        for name, d in results[key].items():
            lines.append(f'| {name} | {d["value_abs"]:.2e} | '
                         f'{d["value_rel"]:.2e} | {d["grad_abs"]:.2e} | '
                         f'{d["grad_rel"]:.2e} |')
    lines += ['', '## AEVLP: `DAMPLabelBank` against `get_pseudo_labels`',
              '', '| setting | entries | release\'s positive pseudo-labels |'
              ' entries that differ |', '| --- | --- | --- | --- |']
    for name, d in results['damp'].items():
        lines.append(f'| {name} | {d["entries"]} | '
                     f'{d["release_positives"]} | {d["differing"]} |')
    if 'ignore' in results:
        lines += ignore_lines(results['ignore'])
    with open(osp.join(out, 'release_agreement.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


#: a difference below this is float64 rounding
ROUNDING = 1e-9


def ignore_undocumented(rows: dict) -> list:
    """IGNORE's rows that disagree for a reason the method page does not
    give: every difference but the release's epsilon in -log(x + eps)."""
    bad = [name for name, d in rows['loss'].items()
           if "release's eps = 0" in name and max(d.values()) > ROUNDING]
    bad += [name for name, d in rows['mask'].items() if d['differing']]
    bad += [name for name, d in rows['steps'].items()
            if d['rejected_differing'] or max(
                d['gap_threshold_abs'], d['avg_threshold_abs']) > ROUNDING]
    return bad


def ignore_lines(rows: dict) -> list:
    lines = ['', '## IGNORE: `ignore_loss` against the release\'s '
             '`ignore_loss`', '',
             'At the same thresholds, in the warm-up (epoch 1) and rejecting '
             '(epoch 5); gradients with respect to the image\'s and the '
             'strong view\'s logits.', '',
             '| setting | value, abs. | value, rel. | gradient, abs. | '
             'gradient, rel. to its largest entry |',
             '| --- | --- | --- | --- | --- |']
    for name, d in rows['loss'].items():
        lines.append(f'| {name} | {d["value_abs"]:.2e} | '
                     f'{d["value_rel"]:.2e} | {d["grad_abs"]:.2e} | '
                     f'{d["grad_rel"]:.2e} |')
    lines += ['', '## IGNORE: `cam_mask` against '
              '`generate_resnet_cam_and_mask`', '',
              'Masked images of a batch of 16 from the same feature map and '
              'classifier (the release\'s CAM: its 1x1 convolution), 5 '
              'seeds.', '',
              '| setting | pixels | kept by the release | pixels that '
              'differ |', '| --- | --- | --- | --- |']
    for name, d in rows['mask'].items():
        lines.append(f'| {name} | {d["pixels"]} | {d["release_kept"]} | '
                     f'{d["differing"]} |')
    lines += ['', '## IGNORE: the thresholds and the loss over steps', '',
              'The release\'s two updates of `train_resnet.py`, as written, '
              'and its `ignore_loss` (with its epsilon) against '
              '`IGNORELoss`, epochs 1 to 5 (warm-up 3), EMA decays 0.9 so '
              'that 20 steps move them.', '',
              '| setting | gap threshold, abs. | average logits, abs. | '
              'loss, abs. | gradient, abs. | entries the release rejects | '
              'rejections that differ |',
              '| --- | --- | --- | --- | --- | --- | --- |']
    for name, d in rows['steps'].items():
        lines.append(f'| {name} | {d["gap_threshold_abs"]:.2e} | '
                     f'{d["avg_threshold_abs"]:.2e} | {d["value_abs"]:.2e} | '
                     f'{d["grad_abs"]:.2e} | {d["release_rejected"]} | '
                     f'{d["rejected_differing"]} |')
    bad = ignore_undocumented(rows)
    lines += ['', 'Every other difference is the release\'s `1e-5` in '
              '`-log(x + eps)`, which spml-mm computes from log-sigmoids '
              '([docs/methods/ignore.md](../methods/ignore.md#where-spml-mm-'
              'differs-from-the-release)): it vanishes with the release\'s '
              'epsilon set to 0. Undocumented disagreements: '
              f'{len(bad)}' + (f' ({", ".join(bad)})' if bad else '') + '.']
    return lines
