"""Runs resumed into or from elsewhere (group ``runs``): another run's work
dir, a moved work dir, a checkpoint without optimizer state, early stopping
killed and resumed, another optimizer constructor, an older checkpoint."""
import os
import os.path as osp
import re
import shutil

from benchmark.faults.harness import (best_files, copied_run, each,
                                      error_line, judged, recovered,
                                      refusal)


def early_stopping_after_kill(bench):
    """Early stopping (patience 2) killed in the epoch after which the
    uninterrupted run stops, then resumed."""
    case = ('early stopping (patience 2) killed in its last epoch, then '
            '--resume')
    options = ['--cfg-options',
               'default_hooks.early_stopping.type=SPMLEarlyStoppingHook',
               'default_hooks.early_stopping.patience=2',
               'train_dataloader.dataset.indices=64']
    full, part = (osp.join(bench.tmp, n) for n in ('stop_full', 'stop_kill'))
    _, log = bench.train(full, *options, epochs=12)
    found = re.search(r'Early stopping after epoch (\d+)', log)
    if not found:
        return case, 'FAILED: the uninterrupted run did not stop', 'crash'
    stop = int(found.group(1))
    config = bench.config(extra=f"[dict(type='KillInTrainHook', "
                          f'epoch={stop})]')
    rc, _ = bench.train(part, *options, config=config, epochs=12)
    rc2, log2 = bench.train(part, '--resume', *options, epochs=12)
    validated = re.findall(r'Epoch\(val\) \[(\d+)\]', log2)
    ended = int(validated[-1]) if validated else None
    same = best_files(part) == best_files(full)
    return (case, f'uninterrupted: stops after epoch {stop}, keeps '
            f'{", ".join(best_files(full))}; killed ({rc}), resumed: stops '
            f'after epoch {ended}, keeps {", ".join(best_files(part))}',
            judged(rc2 == 0 and ended == stop and same, 'right result',
                   'silent wrong answer' if rc2 == 0 else 'crash'))


def other_constructor_resume(bench):
    """A GroupedOptimWrapperConstructor checkpoint with the head's rate at
    10x (as GR's configs: two groups) resumed under MMEngine's constructor,
    a group per parameter."""
    work = osp.join(bench.tmp, 'grouped')
    head = ['--cfg-options',
            'optim_wrapper.paramwise_cfg.custom_keys.head.lr_mult=10.']
    bench.train(work, *head, epochs=1)
    rc, log = bench.train(
        work, '--resume', *head,
        'optim_wrapper.constructor=DefaultOptimWrapperConstructor')
    line = error_line(log, 'cannot resume the optimizer state')
    return ('--resume of a GroupedOptimWrapperConstructor checkpoint under '
            "MMEngine's constructor", f'refused: '
            f'{line[line.find("it has"):][:110]}...',
            judged('optim_wrapper.constructor=Grouped' in line,
                   refusal(rc, line), 'crash'))


def older_metainfo_resume(bench):
    """A checkpoint written before the datasets' metainfo had ``split``."""
    import torch
    work = copied_run(bench, 'older_meta')
    path = osp.join(work, 'epoch_1.pth')
    ckpt = torch.load(path, weights_only=True)
    del ckpt['meta']['dataset_meta']['split']
    torch.save(ckpt, path)
    rc, log = bench.train(work, '--resume')
    warned = 'dataset metainfo from the resumed checkpoint is different' in log
    return ('--resume of a checkpoint whose dataset metainfo lacks split '
            '(older plugin), same classes',
            ('trained to epoch 2' if rc == 0 else 'FAILED') +
            (', WARNED of another dataset' if warned else ', no warning'),
            judged(rc == 0 and not warned, 'right result',
                   'silent wrong answer' if rc == 0 else 'crash'))


def resume_from_other_run(bench):
    first, second = (osp.join(bench.tmp, n) for n in ('first', 'second'))
    bench.train(first, epochs=1)
    before = sorted(os.listdir(first))
    rc, _ = bench.train(second, '--resume', osp.join(first, 'epoch_1.pth'))
    after = sorted(os.listdir(first))
    result = ('data lost' if before != after else
              judged(rc == 0, 'right result', 'crash'))
    return ('--resume PATH into another run\'s work dir',
            f'trained to epoch 2; the other run\'s files '
            f'{"untouched" if before == after else "CHANGED"}', result)


def moved_work_dir(bench):
    work = osp.join(bench.tmp, 'moved_src')
    bench.train(work, epochs=1)
    moved = osp.join(bench.tmp, 'moved_dst')
    shutil.move(work, moved)
    rc, log = bench.train(moved, '--resume')
    return recovered('work dir moved, then --resume', rc, log,
                     'resumed epoch: 1',
                     'resumed epoch 1 from the moved folder')


def weights_only_resume(bench):
    work = osp.join(bench.tmp, 'bare')
    bench.train(work, epochs=1)
    import torch
    ckpt = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)
    del ckpt['optimizer']
    bare = osp.join(bench.tmp, 'weights_only.pth')
    torch.save(ckpt, bare)
    rc, log = bench.train(osp.join(bench.tmp, 'bare2'), '--resume', bare)
    refused = rc != 0 and 'cannot resume from' in log
    rc2, _ = bench.train(osp.join(bench.tmp, 'bare3'), '--resume-weights-only',
                         bare)
    return ('--resume from a checkpoint without optimizer state',
            ('refused: "' + error_line(log, 'cannot resume from')[:70] +
             '..."; --resume-weights-only ' +
             ('trained on' if rc2 == 0 else 'FAILED')),
            judged(refused and rc2 == 0, 'clear error', refusal(rc, '')))


def scenarios(bench):
    yield from each(bench, resume_from_other_run, moved_work_dir,
                    weights_only_resume, early_stopping_after_kill,
                    other_constructor_resume, older_metainfo_resume)
