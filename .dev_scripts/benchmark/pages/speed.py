"""The cost section (``speed.md``), from the json of the speed entry
points (``benchmark.speed`` and its parts): the losses against
MMPretrain's, the training iteration and the label-bank update."""
import argparse
import json
import os
import os.path as osp
from typing import List, Optional, Sequence

from spml_mm.apis import get_method, list_methods

from benchmark.pages.results import report_written
from benchmark.common import add_out_dir, command_line, machine_summary

#: the reference of the loss table (.dev_scripts/benchmark/spml_setups.py)
REFERENCE_NAME = 'MMPretrain CrossEntropyLoss(use_sigmoid=True)'
#: the largest ratio to the reference each loss may take, per shape (the
#: method cards' Loss Time Target)
LOSS_TARGETS = {
    get_method(m).label: get_method(m).loss_time_target
    for m in list_methods(variants=True) if get_method(m).loss_time_target
}
HEAD_SHARE_TARGET = 0.05
#: the parts of the cost section, by entry point
SPEED_PARTS = ('losses', 'iteration', 'banks')


def shapes_text(losses) -> List[str]:
    return [f'{b} x {c}' for b, c in losses]


def mb(nbytes: float) -> str:
    return f'{nbytes / 2**20:.2f}'


def speed_page(losses: dict,
               iteration: Optional[dict],
               banks: Optional[list],
               commands: List[str],
               history: Optional[dict] = None) -> str:
    """The cost section (``speed.md``) from the entry points' results.

    Args:
        losses (dict): ``speed_losses.json``: ``threads``, ``timer``
            (``'thread'`` or ``'wall'``) and ``shapes``, per ``'BxC'`` the
            loss name -> ratio, time, memory, ops, costliest.
        iteration (dict, optional): ``speed_iteration.json``: ``batch``,
            ``img_size``, ``iteration`` and ``heads``.
        banks (list, optional): ``speed_banks.json``'s rows.
        commands (list[str]): The commands that produced them.
        history (dict, optional): ``speed_history.json``: earlier runs'
            ratios, shown beside this one's (:func:`history_lines`).
    """
    measured, threads = losses, losses['threads']
    timer = ('the thread\'s CPU time (`time.thread_time`)'
             if losses['timer'] == 'thread' else 'wall-clock time')
    losses = {
        tuple(int(n) for n in shape.split('x')): rows
        for shape, rows in losses['shapes'].items()
    }
    lines = [
        f'CPU, {threads} torch thread{"s" * (threads > 1)}, timed by '
        f'{timer}; times are medians of interleaved rounds, ratios are '
        'medians of per-round ratios to the reference measured in the same '
        'process.', '',
        '### Loss forward + backward against '
        f'{REFERENCE_NAME}', '',
        'Hyperparameters of each method\'s ResNet-50 COCO (80 classes) and '
        'CUB (312 classes) config, and the COCO config at 600 classes; '
        'EM + APL and OPML-SP with their label bank filled by the config\'s '
        'update rule, LASD with its consistency term over 3 views (3 x B '
        'logits). "ops": ATen operators one forward + backward dispatches; '
        f'the costliest of them at {shapes_text(losses)[-1]} and its share '
        'of the CPU time of all. Each ratio is followed by its target in '
        'parentheses.', ''
    ]
    missed_losses = _loss_lines(lines, losses)
    if history:
        lines += history_lines(history, measured)
    missed_heads = []
    if iteration:
        missed_heads = _iteration_lines(lines, iteration)
    if banks:
        _bank_lines(lines, banks)
    _target_lines(lines, missed_losses,
                  missed_heads if iteration else None)
    lines += [''] + [f'Command: `{c}`' for c in commands]
    lines += ['', f'Machine: {machine_summary()}', '']
    return '\n'.join(lines)


def _loss_lines(lines: List[str], losses: dict) -> List[str]:
    """Append the loss table (``losses``: shape -> loss name -> row);
    return the losses over a target."""
    shapes = list(losses)
    header = '| loss | ' + ' | '.join(
        f'{b} x {c}: ratio (target) | time (us) | peak memory (MB)'
        for b, c in shapes) + ' | ops | costliest op | targets met |'
    lines += [header, '| --- ' * (4 + 3 * len(shapes)) + '|']
    missed_losses = []
    for name in losses[shapes[0]]:
        cells, ok = [], True
        for shape, target in zip(shapes, LOSS_TARGETS.get(name, [None] * 3)):
            row = losses[shape].get(name)
            if row is None:
                cells.append('- | - | -')
                continue
            ok &= target is None or row['ratio'] <= target
            bound = '' if target is None else f' ({target:g})'
            cells.append(f'{row["ratio"]:.2f}{bound} | '
                         f'{1e6 * row["time"]:.0f} | {mb(row["memory"])}')
        if not ok:
            missed_losses.append(name)
        verdict = '-' if name == REFERENCE_NAME else 'yes' if ok else '**no**'
        ops = losses[shapes[0]][name]['ops']
        costliest = losses[shapes[-1]][name]['costliest']
        lines.append(f'| {name} | ' + ' | '.join(cells) +
                     f' | {ops} | {costliest} | {verdict} |')
    return missed_losses


def _target_lines(lines: List[str], missed_losses: List[str],
                  missed_heads: Optional[List[str]]) -> None:
    """Append the targets met and missed (the heads' where the iteration
    was measured: ``missed_heads`` not None)."""
    lines += ['', '### Targets', '']
    lines.append(
        '- every loss within its target ratio to BCE: ' +
        ('met' if not missed_losses else
         f'**missed** by {", ".join(missed_losses)}. The reference is one '
         'fused ATen kernel forward and one backward; the SPML losses are '
         'compositions of elementwise operators (the "ops" column), and on '
         'logits this small their time follows the number of operators '
         'rather than the arithmetic, unless one operator dominates (the '
         '"costliest op" column). The heads\' share of an iteration '
         '(below) is what a training run pays.'))
    if missed_heads is not None:
        lines.append(
            f'- head share of an iteration under '
            f'{100 * HEAD_SHARE_TARGET:g}%: ' +
            ('met' if not missed_heads else
             f'**missed** by {", ".join(missed_heads)}'))


def _iteration_lines(lines: List[str], iteration: dict) -> List[str]:
    """Append the iteration and head tables; return the heads over their
    share."""
    it, heads = iteration['iteration'], iteration['heads']
    names = list(it)
    lines += [
        '', f'### Training iteration, ResNet-50, {iteration["img_size"]} px, '
        f'batch {iteration["batch"]}', '',
        'Data preprocessor, backbone, neck, head, loss, backward and Adam '
        f'step of `{iteration["config"]}` (`model.train_step`; data loading '
        'not included), against the same model with MMPretrain\'s '
        'MultiLabelLinearClsHead and BCE.', '',
        '| model | iteration (s) | ratio | peak memory (MB) |',
        '| --- | --- | --- | --- |'
    ]
    for name in names:
        lines.append(f'| {name} | {it[name]["time"]:.3f} | '
                     f'{it[name]["ratio"]:.3f} | {mb(it[name]["memory"])} |')
    lines += [
        '', 'Each head alone (forward, label-bank lookup, loss, backward, on '
        'fixed features; LASD on its 3 views) and its share of the '
        'iteration above (of the SPML iteration for the SPML heads; LASD\'s '
        'own iteration runs 3 views through the backbone, so its real share '
        'is lower):', '', '| head | time (ms) | share of the iteration | '
        'under 5% |', '| --- | --- | --- | --- |'
    ]
    missed_heads = []
    for name, row in heads.items():
        ok = row['share'] < HEAD_SHARE_TARGET
        if not ok:
            missed_heads.append(name)
        lines.append(f'| {name} | {1e3 * row["time"]:.2f} | '
                     f'{100 * row["share"]:.2f}% | '
                     f'{"yes" if ok else "**no**"} |')
    return missed_heads


def _bank_lines(lines: List[str], banks: list) -> None:
    lines += [
        '', '### Label-bank update after a scoring pass', '',
        'The hook\'s `update_in_blocks` (gather the rows, update rule, '
        'pseudo-label diagnostics) on random scores, one process; bank '
        'storage as configured. `.dev_scripts/benchmark/label_bank.py` times '
        'its parts and the scoring pass.', '',
        '| config | matrix | update (s) | peak memory (MB) | bank '
        '(MB) |', '| --- | --- | --- | --- | --- |'
    ]
    for row in banks:
        lines.append(f'| {row["name"]} | {row["matrix"]} | '
                     f'{row["time"]:.3f} | {mb(row["memory"])} | '
                     f'{mb(row["storage"])} |')


def history_lines(history: dict, losses: dict) -> List[str]:
    """Before and after: the loss ratios of earlier runs beside this one's.
    """
    shapes = list(losses['shapes'])
    runs = history['runs']
    lines = [
        '', '### Loss ratios before and after', '',
        'Ratio to the reference at ' + ' / '.join(
            s.replace('x', ' x ') for s in shapes) + '; ' + '; '.join(
                f'*{r["label"]}*: {r["source"]}' for r in runs) +
        '; *now*: the table above.', '',
        '| loss | ' + ' | '.join(r['label'] for r in runs) + ' | now |',
        '| --- ' * (2 + len(runs)) + '|'
    ]
    for name in LOSS_TARGETS:
        cells = []
        for run in runs + [None]:
            if run is None:
                ratios = [losses['shapes'][s].get(name, {}).get('ratio')
                          for s in shapes]
            else:
                ratios = run['ratios'].get(name, [])
            cells.append(' / '.join('-' if r is None else f'{r:.2f}'
                                    for r in ratios) or '-')
        lines.append(f'| {name} | ' + ' | '.join(cells) + ' |')
    return lines


def parse_speed_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """Add ``--threads`` and ``--out-dir`` to a speed entry point's own
    arguments, parse the command line, and set torch's CPU threads and seed.
    """
    import torch
    parser.add_argument('--threads', type=int,
                        help="torch CPU threads (default: torch's)")
    add_out_dir(parser, 'speed_<part>.json and speed.md')
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    return args


def write_speed_part(out_dir: str, part: str, results, argv: Sequence[str]
                     ) -> str:
    """Write one entry point's ``speed_<part>.json`` (with its command) and
    re-render the cost section from the parts in ``out_dir``."""
    command = command_line(argv)
    os.makedirs(out_dir, exist_ok=True)
    with open(osp.join(out_dir, f'speed_{part}.json'), 'w') as f:
        json.dump(dict(command=command, results=results), f, indent=1)
    return render_speed(out_dir)


def report_part(out_dir: str, part: str, results, argv: Sequence[str]
                ) -> None:
    """Write one entry point's part (:func:`write_speed_part`), print the
    cost section where it renders and say what was written."""
    print()
    text = write_speed_part(out_dir, part, results, argv)
    print(text or '')
    report_written(out_dir,
                   [f'speed_{part}.json'] + (['speed.md'] if text else []))


def render_speed(out_dir: str) -> Optional[str]:
    """``speed.md`` from the ``speed_<part>.json`` files of ``out_dir`` (the
    loss part is required) and ``speed_history.json`` where present."""
    parts = {}
    for part in SPEED_PARTS:
        path = osp.join(out_dir, f'speed_{part}.json')
        if osp.isfile(path):
            with open(path) as f:
                parts[part] = json.load(f)
    if 'losses' not in parts:
        return None
    commands = list(dict.fromkeys(p['command'] for p in parts.values()))
    history = None
    if osp.isfile(osp.join(out_dir, 'speed_history.json')):
        with open(osp.join(out_dir, 'speed_history.json')) as f:
            history = json.load(f)
    text = speed_page(parts['losses']['results'],
                      parts.get('iteration', {}).get('results'),
                      parts.get('banks', {}).get('results'), commands,
                      history)
    with open(osp.join(out_dir, 'speed.md'), 'w') as f:
        f.write(text)
    return text
