"""Cost of APL's between-epoch work: the bank update and the scoring pass.

Part 1 times, on random scores, what SPMLPseudoLabelHook does after the
scoring pass at NUS-WIDE (150,000 x 81) and COCO (82,081 x 80) scale:
assembling the gathered rows into N x C matrices (de-duplication by
sample_idx), AsymmetricPseudoLabeling's update (one kthvalue per class),
the precision/recall diagnostic, all three as the hook runs them
(update_in_blocks), and OPML's update as the hook runs it (per-class AP and
label correction). Part 2 times, on synthetic images, one training
iteration and one eval-mode scoring batch of a model config, and reports the
scoring pass's share of an epoch (it reads every training image once more,
forward only). Wall-clock and process CPU seconds are both shown: on a
shared machine the CPU time is the steadier of the two.

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.label_bank
    python -m benchmark.label_bank --repeats 6 --iters 5 --batch-size 4
    python -m benchmark.label_bank --models --json bank.json  # bank only
"""
import argparse
import json
import os.path as osp
import statistics
import sys
import time

import torch
from mmengine.config import Config
from mmengine.utils import ProgressBar

from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from spml_mm.engine.label_bank_scoring import (gather_records,
                                               pseudo_label_counts,
                                               update_in_blocks)
from spml_mm.models import LabelBank, OPMLLabelBank
from spml_mm.models.label_banks.batch import ScoredBatch
from spml_mm.models.label_banks.updaters import (AsymmetricPseudoLabeling,
                                                 OPMLLabelUpdater)
from benchmark.pages.label_bank import BANK_COLUMNS
from benchmark.spml_setups import SIZES
from benchmark.common import REPO, command_line

MODELS_DEFAULT = ['configs/em_apl/em_apl_vgg11bn_demo.py',
                  'configs/em_apl/resnet50_coco.py']


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=5,
                        help='timed bank updates per size')
    parser.add_argument('--models', nargs='*', default=MODELS_DEFAULT,
                        help='configs whose training and scoring are timed')
    parser.add_argument('--iters', type=int, default=3,
                        help='timed batches per model (after one warm-up)')
    parser.add_argument('--batch-size', type=int, default=None,
                        help='batch size of the model timings (default: '
                        "the config's training batch size)")
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads (default 1)')
    parser.add_argument('--json', help='also write the results here')
    parser.add_argument(
        '--before', help='the --json of an earlier run (e.g. '
        'docs/results/label_bank_update_before.json): the bank table of '
        '--md shows its CPU seconds beside this run\'s')
    parser.add_argument(
        '--md', help='write the bank table (CPU seconds, with --before '
        'beside) here, e.g. docs/results/label_bank_update.md, a section '
        'of docs/RESULTS.md')
    return parser.parse_args()




def bank_table(banks, before, command: str) -> str:
    """The bank rows as markdown, process CPU seconds, an earlier run's
    beside them (``before -> now``) where given."""
    earlier = {r['name']: r for r in (before or {}).get('banks', [])}
    lines = [
        f'Command: `{command}` ({torch.get_num_threads()} torch thread(s)); '
        'random scores, one process; median process CPU seconds of the '
        'work SPMLPseudoLabelHook does after a scoring pass' +
        (f'; before -> now, *before*: {before["source"]}' if before else '')
        + '.', '',
        '| matrix | ' + ' | '.join(t for _, t in BANK_COLUMNS) +
        ' | selected per round |', '| --- ' * (len(BANK_COLUMNS) + 2) + '|'
    ]
    for r in banks:
        cells = []
        for key, _ in BANK_COLUMNS:
            old = earlier.get(r['name'], {}).get(key)
            cells.append((f'{old[1]:.3f} -> ' if old else '') +
                         f'{r[key][1]:.3f}')
        lines.append(f'| {r["name"]} | ' + ' | '.join(cells) +
                     f' | {r["selected"]:,} |')
    return '\n'.join(lines) + '\n'



def timed(fn):
    """Wall-clock and process CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def bank_rows(repeats, progress):
    rows = []
    for name, (n, c) in SIZES.items():
        g = torch.Generator().manual_seed(0)
        scores = torch.rand(n, c, generator=g)
        observed = torch.zeros(n, c, dtype=torch.bool)
        observed[torch.arange(n), torch.randint(c, (n, ), generator=g)] = 1
        full = observed | (torch.rand(n, c, generator=g) < 0.02)
        # one rank's batches of 64 in sampler order
        records = [ScoredBatch(torch.arange(i, min(i + 64, n)),
                               scores[i:i + 64], observed[i:i + 64],
                               full[i:i + 64]) for i in range(0, n, 64)]
        apl = AsymmetricPseudoLabeling(0.9)
        bank = LabelBank(num_classes=c, num_samples=n)
        opml = OPMLLabelUpdater(zeta=0.5, correction_start_epoch=1)
        opml_bank = OPMLLabelBank(num_classes=c, num_samples=n)
        # T = 10, T_w = 4: six rounds; each timed update starts from a bank
        # that already holds the earlier rounds
        timings = dict(gather=[], update=[], stats=[], hook=[], opml=[])
        for round_ in range(repeats):
            epoch = 4 + round_ % 6
            if epoch == 4:
                bank.pseudo_label.zero_()
            before = bank.pseudo_label.clone(), bank.soft_label.clone()
            timings['gather'].append(
                timed(lambda: gather_records(records, n, c)))
            timings['update'].append(
                timed(lambda: apl.update(bank, scores, observed, epoch, 10,
                                         4)))
            timings['stats'].append(
                timed(lambda: pseudo_label_counts(bank, observed, full)))
            bank.pseudo_label.copy_(before[0])
            bank.soft_label.copy_(before[1])
            timings['hook'].append(
                timed(lambda: update_in_blocks(bank, records, apl, epoch, 10,
                                               4)))
            timings['opml'].append(
                timed(lambda: update_in_blocks(opml_bank, records, opml,
                                               epoch, 10, 4)))
            progress.update()
        row = dict(name=f'{name} {n:,} x {c}',
                   selected=int(apl.num_per_epoch(observed, 6).sum()))
        for key, values in timings.items():
            row[key] = tuple(
                statistics.median(v[i] for v in values) for i in (0, 1))
        rows.append(row)
    return rows


def model_row(config, iters, batch_size, progress):
    cfg = Config.fromfile(osp.join(REPO, config))
    cfg.model.backbone.pop('init_cfg', None)
    model = MODELS.build(cfg.model)
    model.init_weights()
    bank = getattr(model.head, 'label_bank', None)
    num_classes = cfg.model.head.num_classes
    batch = batch_size or cfg.train_dataloader.batch_size
    size = next((t['scale'] for t in cfg.train_pipeline
                 if t['type'] == 'Resize'), (48, 48))
    if bank is not None:
        bank.allocate(batch)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    data = dict(
        inputs=[torch.randint(0, 255, (3, size[1], size[0]),
                              dtype=torch.uint8) for _ in range(batch)],
        data_samples=[
            DataSample(metainfo=dict(sample_idx=i)).set_gt_label(
                [i % num_classes]) for i in range(batch)
        ])

    def train_iter():
        model.train()
        losses = model(**model.data_preprocessor(data, True), mode='loss')
        optimizer.zero_grad()
        sum(losses.values()).backward()
        optimizer.step()

    @torch.no_grad()
    def score_batch():
        model.eval()
        model.test_step(data)

    timings = {}
    for name, fn in (('train', train_iter), ('score', score_batch)):
        fn()  # warm-up
        times = []
        for _ in range(iters):
            times.append(timed(fn)[0])
            progress.update()
        timings[name] = statistics.median(times) / batch
    return dict(name=f'{osp.basename(config)} ({size[0]} px, batch {batch})',
                **timings)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    print(f'torch {torch.__version__}, {torch.get_num_threads()} threads')
    progress = ProgressBar(
        len(SIZES) * args.repeats + 2 * args.iters * len(args.models))
    banks = bank_rows(args.repeats, progress)
    models = [
        model_row(cfg, args.iters, args.batch_size, progress)
        for cfg in args.models
    ]
    print('\n\nBank work after each scoring pass, median wall / CPU seconds')
    print('| matrix | assemble rows | APL update | diagnostic | APL, as the '
          'hook runs it | OPML, as the hook runs it | selected per round |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    for r in banks:
        cells = ' | '.join(
            f'{r[k][0]:.3f} / {r[k][1]:.3f}'
            for k in ('gather', 'update', 'stats', 'hook', 'opml'))
        print(f'| {r["name"]} | {cells} | {r["selected"]:,} |')
    print('\nScoring pass vs training (seconds per image, median)')
    print('| model | training iteration | scoring (eval, no grad) | '
          'scoring share of an APL epoch |')
    print('| --- | --- | --- | --- |')
    for r in models:
        share = r['score'] / (r['train'] + r['score'])
        print(f'| {r["name"]} | {r["train"]:.4f} | {r["score"]:.4f} | '
              f'{100 * share:.0f}% |')
    if args.md:
        before = None
        if args.before:
            with open(args.before) as f:
                before = json.load(f)
        with open(args.md, 'w') as f:
            f.write(bank_table(banks, before, command_line(sys.argv)))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(threads=args.threads, banks=banks, models=models),
                      f, indent=1)
    worst = max(r['hook'][0] for r in banks)
    for r in models:
        n = SIZES['NUS-WIDE'][0]
        print(f'{r["name"]}: a scoring pass over {n:,} images takes about '
              f'{r["score"] * n:,.0f} s; the bank work after it at most '
              f'{worst:.2f} s')


if __name__ == '__main__':
    main()
