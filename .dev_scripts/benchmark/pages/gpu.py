"""The GPU speed page (``benchmark.speed_gpu``): every head's step
against MMPretrain's and the fast recipe's switches, with the operators of
``head_profile.json`` under the heads table."""
import os
import os.path as osp
from typing import List, Optional

from benchmark.pages import head_profile
from benchmark.common import write_json

#: the targets: every head's images/s as a share of the stock head's; the
#: fast recipe's speed-up with data loading
HEAD_TARGET = 0.97
RECIPE_TARGET = 2.


def fmt_memory(result: dict) -> str:
    return '-' if result['peak_mib'] is None else \
        f"{result['peak_mib']:,.0f}"


def render(record: dict, op_profile: Optional[dict] = None) -> str:
    """The page of a results record (``speed_gpu``'s json), with the section
    of ``op_profile`` (a ``head_profile.py`` json, kept in its own file and
    labelled with its own machine and commit) under the heads table."""
    heads, recipe, settings = (record['heads'], record['recipe'],
                               record['settings'])
    lines = [
        '# Training speed on a GPU', '',
        f"Measured with `{record['command']}` on {record['environment']}. "
        f"Batch {settings['batch_size']}, {settings['img_size']} px, median "
        f"of {settings['rounds']} rounds of {settings['iters']} iterations "
        f"after {settings['warmup']} of warm-up.", ''
    ]
    if not record['complete']:
        lines += ['**Incomplete**: the run ended (its `--budget` spent) '
                  'before the rows below were all measured.', '']
    lines += heads_lines(heads, record, op_profile)
    lines += recipe_lines(recipe)
    return '\n'.join(lines)


def heads_lines(heads: dict, record: dict,
                op_profile: Optional[dict]) -> List[str]:
    """The heads table (``heads``: precision -> head -> timing) with the
    heads below the target, the rounds' spread and ``op_profile``'s
    section."""
    lines = []
    heads = {p: row for p, row in heads.items() if 'stock' in row}
    if not heads:
        return lines
    methods = list(dict.fromkeys(
        m for row in heads.values() for m in row if m != 'stock'))
    lines += [
        '## Every head against MMPretrain\'s', '',
        'A whole `train_step` without data loading: images/s of the '
        'step with each method\'s head as a share of the step with '
        "MMPretrain's `MultiLabelLinearClsHead` and sigmoid BCE on the "
        'same ResNet-50; peak memory in MiB (LASD: three views of each '
        f'image; images/s counts samples). Target: {HEAD_TARGET} or '
        'more.', '',
        '| precision | stock img/s | ' + ' | '.join(methods) +
        ' | stock MiB | peak MiB (max over heads) |',
        '| --- ' * (len(methods) + 4) + '|'
    ]
    missed, below = [], []
    for precision, row in heads.items():
        stock = row['stock']['images_per_s']
        shares = {m: row[m]['images_per_s'] / stock for m in methods
                  if m in row}
        missed += [f'{m} {precision} {share:.3f} '
                   f'({HEAD_TARGET - share:.3f} short)'
                   for m, share in shares.items() if share < HEAD_TARGET]
        below += [m for m, share in shares.items() if share < HEAD_TARGET]
        cells = ' | '.join(f'{shares[m]:.3f}' if m in shares else '-'
                           for m in methods)
        peak = [row[m]['peak_mib'] for m in shares
                if row[m]['peak_mib'] is not None]
        lines.append(
            f'| {precision} | {stock:.1f} | {cells} | '
            f"{fmt_memory(row['stock'])} | "
            f"{f'{max(peak):,.0f}' if peak else '-'} |")
    lines += ['', 'Below the target: ' + ('; '.join(missed) or 'none')
              + '.', '']
    spread = {p: max(max(r['rounds']) / min(r['rounds']) - 1
                     for r in row.values() if r.get('rounds'))
              for p, row in heads.items()
              if any(r.get('rounds') for r in row.values())}
    if spread:
        lines += ["The rounds' spread (a row's fastest round against "
                  'its slowest, the most in each precision): ' +
                  '; '.join(f'{p} {v:.1%}' for p, v in spread.items())
                  + '; a share nearer 1 than that is within the '
                  "measurement's noise.", '']
    if op_profile:
        timed_at = record.get('commit') or 'not recorded'
        if timed_at != op_profile.get('commit'):
            lines += [
                'The timings above and the operators below are of '
                f'different code: the timings of spml-mm commit '
                f"{timed_at}, the operators of commit "
                f"{op_profile.get('commit') or 'unknown'}.", ''
            ]
        lines.append(head_profile.render(op_profile, below))
    return lines


def recipe_lines(recipe: dict) -> List[str]:
    """The recipe table (``recipe``: config and precision -> variant ->
    timings with and without loading) and the rows below the target."""
    lines = []
    recipe = {k: row for k, row in recipe.items() if 'stock' in row}
    if not recipe:
        return lines
    inputs = any('gpu_fast_input' in row for row in recipe.values())
    lines += [
        '## The fast recipe and each of its switches', '',
        'Images/s of a whole training iteration with data loading '
        '(the config\'s loader) and without it (one loaded batch '
        'replayed), MMPretrain\'s recipe as the configs inherit it '
        '(`stock`), each switch of `configs/_base_/runtime_gpu_fast.py` '
        'alone, and all of them (`gpu_fast`' + (
            '; `gpu_fast_input`: with the input switches the recipe leaves '
            'off, `image_cache` and `device_flip`' if inputs else '') +
        '); speed-up against stock '
        f'with data loading. Target: `gpu_fast` {RECIPE_TARGET:g}x or '
        'more.', '',
        '| config and precision | variant | img/s with data | '
        'img/s without | speed-up | peak MiB |',
        '| --- | --- | --- | --- | --- | --- |'
    ]
    missed = []
    for key, row in recipe.items():
        stock = row['stock']['loaded']['images_per_s']
        for name, result in row.items():
            loaded = result['loaded']['images_per_s']
            if name.startswith('gpu_fast') and \
                    loaded / stock < RECIPE_TARGET:
                label = key if name == 'gpu_fast' else f'{key} {name}'
                missed.append(f'{label} {loaded / stock:.2f}x '
                              f'({RECIPE_TARGET - loaded / stock:.2f} '
                              'short; ' + why(result, stock) + ')')
            lines.append(
                f'| {key} | {name} | {loaded:.1f} | '
                f"{result['replayed']['images_per_s']:.1f} | "
                f'{loaded / stock:.2f} | '
                f"{fmt_memory(result['replayed'])} |")
    measured = any('gpu_fast' in row for row in recipe.values())
    lines += ['', '`gpu_fast` below the target: ' +
              ('; '.join(missed) or 'none') + '.' if measured else
              '`gpu_fast` is not measured yet.', '']
    return lines


def why(result: dict, stock: float) -> str:
    """What bounds a recipe row: the loader where it gives much less than
    the step alone takes, else the step."""
    loaded = result['loaded']['images_per_s']
    replayed = result['replayed']['images_per_s']
    if loaded < 0.8 * replayed:
        return (f'the loader: the step alone runs at {replayed / stock:.2f}x'
                f', the loader feeds {loaded / replayed:.0%} of it')
    return (f'the step: without data loading {replayed / stock:.2f}x, the '
            f'loader feeds {loaded / replayed:.0%} of it')


def write(record: dict, out: str, op_profile: Optional[dict] = None) -> None:
    """``gpu.json`` (written to a temporary file and renamed) and
    ``gpu.md`` (with ``op_profile``'s section, :func:`render`) under
    ``out``."""
    os.makedirs(out, exist_ok=True)
    write_json(osp.join(out, 'gpu.json'), record)
    with open(osp.join(out, 'gpu.md'), 'w') as f:
        f.write(render(record, op_profile))
