"""The releases' agreement page
(``.dev_scripts/analysis/release_agreement.py``): VLPL's and AEVLP's losses and
pseudo-labels against the releases' own functions."""
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
        '# VLPL and AEVLP: agreement with the releases\' own functions', '',
        f'Written by `{command}` from the releases at the commits below, on '
        'random float64 inputs (3 seeds per row, the largest difference '
        'shown). Gradients are with respect to the logits. Where we differ '
        'and why: [docs/methods/teacher_pseudo_labels.md]'
        '(../methods/teacher_pseudo_labels.md).', ''
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
    with open(osp.join(out, 'release_agreement.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
