"""The label bank at scale page (``benchmark.label_bank_scale``):
the bank's memory in each storage, the update's time, the scoring pass's
gather and the bank of each dataset."""
from typing import List

import torch

from spml_mm.models.label_banks import LabelBank
from benchmark.common import machine_summary

#: columns of label_bank_update.md's bank table (benchmark.label_bank
#: --md): key of the timings, title
BANK_COLUMNS = (('gather', 'assemble rows'), ('update', 'APL update'),
                ('stats', 'diagnostic'), ('hook', 'APL, as the hook runs it'),
                ('opml', 'OPML, as the hook runs it'))
STORAGES = ('full', 'float16', 'uint8')
STORAGE_NAMES = dict(
    full='full (int8 state, float32 soft label)',
    float16='float16 (2-bit state, float16 soft label)',
    uint8='uint8 (2-bit state, uint8 soft label)')
#: the hook's default bound on a gathered block (SPMLPseudoLabelHook)
DEFAULT_GATHER_MB = 256.
#: training sets of the memory table
#: (docs/user_guides/label_bank_at_scale.md; train split after the
#: protocol's 80/20 split; OpenImages-like: OpenImages V6's 9M training
#: images and 600 boxable classes)
DATASETS = (('PASCAL VOC 2012', 4574, 20), ('MS-COCO 2014', 65665, 80),
            ('NUS-WIDE', 120000, 81), ('CUB-200-2011', 4795, 312),
            ('OpenImages-like', 9000000, 600))


def gb(num_bytes: float) -> str:
    return f'{num_bytes / 1e9:,.2f} GB'


def bank_bytes(num_samples: int, num_classes: int, storage: str) -> int:
    """Bytes of a bank's buffers: N times those of a one-sample bank."""
    one = LabelBank(num_classes, 1, storage=storage)
    return num_samples * sum(b.numel() * b.element_size()
                             for b in one.buffers())


def render(results: dict) -> str:
    """``label_bank.md`` from ``label_bank.json``: the banks' memory, the
    update's time, the scoring pass's gather and the datasets' banks."""
    banks, gathers = results['banks'], results['gather']
    lines = [
        f'Command: `{results["command"]}`; simulated scores (uniform '
        'random), one random observed positive per sample. Machine: '
        f'{machine_summary()}, {torch.get_num_threads()} torch threads, '
        'shared with other jobs (1-minute load average '
        f'{results["load"]:.1f} at the end of the run): the times are upper '
        'bounds of what an idle machine gives.', '',
        'Memory of the bank (each rank holds all of it). *measured*: the '
        'resident memory the allocation added; *computed*: from the '
        "buffers' shapes, where the bank did not fit in this machine's "
        'memory.', '',
        '| bank (N x C) | storage | bytes / entry | memory | vs full |',
        '| --- | --- | --- | --- | --- |'
    ]
    full = {(r['samples'], r['classes']): r['bytes'] for r in banks
            if r['storage'] == 'full'}
    for r in banks:
        how = (f'{gb(r["resident_bytes"])} measured'
               if r['memory'] == 'measured' else f'{gb(r["bytes"])} computed')
        ratio = full[r['samples'], r['classes']] / r['bytes']
        lines.append(f'| {r["samples"]:,} x {r["classes"]} | '
                     f'{STORAGE_NAMES[r["storage"]]} | '
                     f'{r["bytes_per_entry"]:.2f} | {how} | ' +
                     ('-' if r['storage'] == 'full' else
                      f'{ratio:.1f}x smaller') + ' |')
    lines += update_lines(banks)
    if gathers:
        lines += gather_lines(gathers)
    lines += dataset_lines()
    return '\n'.join(lines) + '\n'


def update_lines(banks: list) -> List[str]:
    """The table of the update's time per bank."""
    lines = [
        '', 'Time of one APL update (theta 0.9, T - T_w = 5: 18% of each '
        "class's unobserved entries selected), decode/encode of the compact "
        'modes included, blocks of classes as the hook runs them. '
        '*extrapolated*: measured on the first classes and scaled to all '
        '(the update treats classes independently).', '',
        '| bank (N x C) | storage | update time | how |',
        '| --- | --- | --- | --- |'
    ]
    for r in banks:
        if 'update_seconds' not in r:
            how = 'not run (a block does not fit in --max-gb)'
            lines.append(f'| {r["samples"]:,} x {r["classes"]} | '
                         f'{r["storage"]} | - | {how} |')
            continue
        if r['update_classes'] == r['classes']:
            how = f'measured on all {r["classes"]} classes'
        else:
            how = (f'extrapolated: {r["update_seconds"]:.1f} s measured on '
                   f'{r["update_classes"]} of {r["classes"]} classes')
        lines.append(f'| {r["samples"]:,} x {r["classes"]} | {r["storage"]}'
                     f' | {r["update_seconds_all"]:,.1f} s | {how} |')
    return lines


def gather_lines(gathers: list) -> List[str]:
    """The table of the scoring pass's gather (the first row at the
    measured size, the others scaled to it)."""
    g0 = gathers[0]
    n, c, w = g0['samples'], g0['classes'], g0['world_size']
    lines = [
        '', f'Scoring pass at {n:,} x {c}: `update_in_blocks` (gather of '
        f'the scores + APL update, uint8 bank) in {w} gloo processes, '
        f'each holding its {n // w:,} rows of float32 scores. The whole '
        f'(N, C) float32 score matrix would be {gb(4 * n * c)} on every '
        'rank; the hook gathers blocks of classes instead. Peak memory a '
        'rank adds during the call (resident high-water mark):', '',
        '| gathering | classes per block | peak added per rank | time | '
        'banks identical on all ranks |',
        '| --- | --- | --- | --- | --- |'
    ]
    for r in gathers:
        scale = n / r['samples']
        if scale == 1:
            peak = f'{gb(r["peak_extra_bytes"])} measured'
            took = f'{r["seconds"]:,.1f} s'
        else:
            peak = (f'{gb(r["peak_extra_bytes"] * scale)} extrapolated '
                    f'({gb(r["peak_extra_bytes"])} measured at '
                    f'{r["samples"]:,} samples, x{scale:g})')
            took = f'({r["seconds"]:,.1f} s at {r["samples"]:,})'
        kind = ('one block of all classes' if r['block'] == c else
                f'class blocks, max_gather_mb={r["max_gather_mb"]:g}')
        if r['block'] != c and r['max_gather_mb'] != DEFAULT_GATHER_MB:
            kind += (f' (the default {DEFAULT_GATHER_MB:g} did not fit '
                     'in the memory this machine had free)')
        lines.append(f'| {kind} | {r["block"]} | {peak} | {took} | '
                     f'{"yes" if r["identical_banks"] else "NO"} |')
    return lines


def dataset_lines() -> List[str]:
    """The table of each dataset's bank, in each storage."""
    lines = [
        '', 'Memory of the bank per rank for each dataset (computed from the '
        "buffers' shapes; N: training images after the protocol's split):",
        '', '| dataset | N x C | full | float16 | uint8 |',
        '| --- | --- | --- | --- | --- |'
    ]
    for name, n, c in DATASETS:
        sizes = ' | '.join(
            f'{bank_bytes(n, c, s) / 1e6:,.1f} MB' for s in STORAGES)
        lines.append(f'| {name} | {n:,} x {c} | {sizes} |')
    return lines
