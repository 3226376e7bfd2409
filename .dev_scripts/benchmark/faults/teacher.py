"""VLPL's and AEVLP's teacher score files (group ``teacher``): a regenerated
dataset, another file at ``--resume``, a subset, no crops, no fingerprints,
a text file, ``tools/check_dataset.py`` of a missing or foreign file, the
documented CLIP command offline."""
import json
import os
import os.path as osp
import shutil

import numpy as np

from spml_mm.utils import load_checkpoint_safely
from benchmark.faults.harness import (TRAIN_LINE, each, error_line,
                                      judged, refusal)
from benchmark.common import REPO


VLPL = 'configs/vlpl/vlpl_vgg11bn_demo.py'


AEVLP = 'configs/aevlp/aevlp_vgg11bn_demo.py'


def teacher_file(bench, path, root=None, noise=0.3, seed=0, crops=0):
    """Write a synthetic teacher's score file of the demo's training set at
    ``root`` (the bench's demo by default) to ``path``; its scores."""
    from mmengine.config import Config
    from mmpretrain.registry import DATASETS

    from spml_mm.benchmarks.synthetic_teacher import write_synthetic_teacher
    cfg = Config.fromfile(osp.join(REPO, VLPL))
    dataset = DATASETS.build(
        dict(cfg.train_dataloader.dataset, data_root=root or bench.data))
    return write_synthetic_teacher(dataset, path, noise, seed, crops)


def teacher_train(bench, name, score_file, *extra, base=VLPL, root=None,
                  epochs=1, resume=None):
    """tools/train.py of a teacher method reading ``score_file``."""
    work = osp.join(bench.tmp, f'teacher_{name}')
    args = ['tools/train.py', bench.config(base=base), '--work-dir', work]
    if resume:
        args += ['--resume', resume]
    rc, log = bench.run(args + bench.options(data=root, epochs=epochs) + [
        f'model.head.label_bank.score_file={score_file}', *extra])
    return work, rc, log


def teacher_refusal(rc, log, expect, *advice):
    """(the refusal's message, the result) of a run that must stop before
    training with ``expect`` and every ``advice`` in its message."""
    line = error_line(log, expect)
    ok = line and TRAIN_LINE not in log and all(a in line for a in advice)
    message = line.split('Error: ', 1)[-1]
    return message, judged(TRAIN_LINE not in log,
                           refusal(rc, line) if ok else 'crash',
                           'silent wrong answer')


def regenerated_teacher_data(bench):
    root = osp.join(bench.tmp, 'regenerated')
    shutil.copytree(bench.data, root)
    score_file = osp.join(root, 'teacher_scores', 'synthetic.npz')
    teacher_file(bench, score_file, root)
    _, make_log = bench.run([
        'tools/make_demo_data.py', '--out-dir', root, '--num-train', '160',
        '--num-test', '80', '--seed', '7'
    ])
    named = 'training refuses it' in make_log
    _, rc, log = teacher_train(bench, 'regenerated', score_file, root=root)
    message, result = teacher_refusal(rc, log, 'scored other image files',
                                      'Score them again with PYTHONPATH='
                                      '.dev_scripts python -m '
                                      'benchmark.teacher_quality')
    return ('the demo regenerated in place (make_demo_data.py --seed 7), '
            'its VLPL score file kept',
            f'make_demo_data.py {"named" if named else "did NOT name"} the '
            f'file; training refused: "{message.split(" from the ones")[0]}'
            '", with the command that writes it again',
            result if named else 'crash')


def teacher_resume(bench):
    """A VLPL run resumed with another teacher's file: refused, then
    resumed with resume_scores=file."""
    files = [osp.join(bench.tmp, 'teachers', f'{k}.npz') for k in 'ab']
    state = {}

    def refused():
        teacher_file(bench, files[0])
        state['b'] = teacher_file(bench, files[1], noise=0.6, seed=1)
        work, _, _ = teacher_train(bench, 'resume_a', files[0])
        state['checkpoint'] = osp.join(work, 'epoch_1.pth')
        _, rc, log = teacher_train(bench, 'resume_b', files[1], epochs=2,
                                   resume=state['checkpoint'])
        message, result = teacher_refusal(
            rc, log, 'differ from those of', 'resume_scores=checkpoint',
            f'score_file={files[0]}')
        return ('--resume a VLPL checkpoint with another teacher score '
                'file', 'refused before training: the checkpoint\'s scores '
                '(from a.npz) differ from b.npz\'s; names score_file=a.npz '
                'and default_hooks.teacher_scores.resume_scores=checkpoint '
                'or =file' if result == 'clear error' else
                f'{message[:130]}', result)

    def chosen():
        work, rc, log = teacher_train(
            bench, 'resume_file', files[1],
            'default_hooks.teacher_scores.resume_scores=file', epochs=2,
            resume=state['checkpoint'])
        ok = rc == 0 and f'training on the teacher scores of {files[1]}' \
            in log
        if ok:
            bank = load_checkpoint_safely(osp.join(work, 'epoch_2.pth'))[
                'state_dict']['head.label_bank.teacher_score']
            ok = np.array_equal(bank.numpy(), state['b'])
        return ('the same with default_hooks.teacher_scores.resume_scores='
                'file', 'trained epoch 2 on the new file\'s scores; the log '
                'names the file' if ok else
                f'FAILED ({error_line(log, "Error")[:70]})',
                judged(ok, 'right result', 'silent wrong answer'))

    yield refused
    yield chosen


def teacher_subset(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'whole.npz')
    teacher_file(bench, score_file)
    _, rc, log = teacher_train(bench, 'subset', score_file,
                               'train_dataloader.dataset.indices=64')
    ok = rc == 0 and 'Teacher scores of 64 training images' in log
    return ('a teacher file of the whole training set, training on '
            'train_dataloader.dataset.indices=64',
            'trained on the 64 images\' rows' if ok else
            f'FAILED ({error_line(log, "Error")[:90]})',
            judged(ok, 'right result', 'crash'))


def teacher_without_crops(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'no_crops.npz')
    teacher_file(bench, score_file)
    _, rc, log = teacher_train(bench, 'no_crops', score_file, base=AEVLP)
    message, result = teacher_refusal(
        rc, log, 'holds no crop scores',
        'PYTHONPATH=.dev_scripts python -m benchmark.teacher_quality '
        '--write-teacher',
        '--crops 4')
    return ('AEVLP on a synthetic teacher file without crop scores',
            'refused: "no_crops.npz holds no crop scores", naming python -m '
            'benchmark.teacher_quality --write-teacher ... --crops 4'
            if result == 'clear error' else message[:130], result)


def teacher_without_fingerprints(bench):
    from spml_mm.datasets.teacher_scores import read_teacher_scores
    score_file = osp.join(bench.tmp, 'teachers', 'old.npz')
    teacher_file(bench, score_file)
    table = read_teacher_scores(score_file)
    np.savez(score_file, scores=table['scores'],
             img_paths=np.array(table['img_paths']),
             classes=np.array(table['classes']),
             meta=np.array(json.dumps(table['meta'])))
    _, rc, log = teacher_train(bench, 'old_file', score_file)
    message, result = teacher_refusal(
        rc, log, 'records no image fingerprints', '--write-teacher',
        '--source file --scores')
    return ('a teacher score file without image fingerprints (an earlier '
            'version\'s)', 'refused: "old.npz records no image fingerprints '
            '..."; names the command that scores again and the one that '
            'binds a copy to the images (--source file --scores old.npz '
            '--out old_bound.npz)' if result == 'clear error' else message[:130],
            result)


def teacher_text_npz(bench):
    score_file = osp.join(bench.tmp, 'teachers', 'text.npz')
    os.makedirs(osp.dirname(score_file), exist_ok=True)
    with open(score_file, 'w') as f:
        f.write('image,0,1\nimages/train/train_00000.png,0.1,0.9\n')
    _, rc, log = teacher_train(bench, 'text_npz', score_file)
    message, result = teacher_refusal(rc, log, 'is not an .npz file')
    ok = 'pickled' not in message
    return ('a text file as the teacher score file (.npz)',
            f'refused: {message.split("; ")[0]}', result if ok else 'crash')


def teacher_check_dataset(bench):
    """tools/check_dataset.py of the VLPL demo config whose score file is
    missing, or written for other classes."""
    missing = osp.join(bench.tmp, 'teachers', 'missing.npz')
    other = osp.join(bench.tmp, 'teachers', 'other_classes.npz')

    def check(score_file, expect, case):
        rc, log = bench.run(['tools/check_dataset.py',
                             bench.config(base=VLPL)] + bench.options() +
                            [f'model.head.label_bank.score_file={score_file}'])
        line = error_line(log, expect)
        ok = line.startswith('teacher scores (model.head.label_bank.'
                             'score_file): ') and '1 problem(s)' in log
        problem = line.split('): ', 1)[-1].replace(bench.tmp + '/', '')
        problem = problem.split('; write it')[0].split(': 10 classes')[0]
        return (f'tools/check_dataset.py, VLPL demo config: {case}',
                f'1 problem: "{problem}", with the command that writes it'
                if ok else f'{error_line(log, "problem(s)")}',
                judged(ok, refusal(rc, line), 'silent wrong answer'))

    def other_classes():
        from spml_mm.datasets.teacher_scores import (read_teacher_scores,
                                                     save_teacher_scores)
        teacher_file(bench, other)
        table = read_teacher_scores(other)
        save_teacher_scores(other, table['scores'], table['img_paths'],
                            [f'class {c}' for c in table['classes']],
                            table['meta'],
                            img_fingerprints=table['img_fingerprints'])
        return check(other, 'another class list',
                     'the teacher file names other classes')

    yield lambda: check(missing, 'not found',
                        'the teacher score file is missing')
    yield other_classes


def documented_clip_command(bench):
    checkpoint = osp.join(bench.tmp, 'teachers', 'clip.pth')
    os.makedirs(osp.dirname(checkpoint), exist_ok=True)
    with open(checkpoint, 'wb') as f:
        f.write(b'weights')
    rc, log = bench.run([
        'tools/score_teacher.py', VLPL, '--source', 'clip', '--checkpoint',
        checkpoint, '--out', osp.join(bench.tmp, 'teachers', 'clip.npz'),
        '--cfg-options', f'train_dataloader.dataset.data_root={bench.data}'
    ], env=dict(HF_HUB_OFFLINE='1', HF_HOME=osp.join(bench.tmp, 'hf')))
    line = error_line(log, 'error: ')
    if 'model.tokenizer.name_or_path=FOLDER' in line:
        outcome = ('the zoo config read; refused before the model is built: '
                   'the tokenizer is not in the cache and HF_HUB_OFFLINE is '
                   'set, naming --teacher-options '
                   'model.tokenizer.name_or_path=FOLDER')
    elif 'transformers>=4.28,<4.52' in line:
        outcome = ('the zoo config read; refused: CLIPZeroShot needs pip '
                   "install 'transformers>=4.28,<4.52' 'huggingface_hub<1' "
                   'pycocotools (not installed here)')
    else:
        outcome = line[:130]
    return ('tools/score_teacher.py --source clip --checkpoint CKPT (the '
            'default zoo config), offline', outcome,
            judged(outcome != line[:130], refusal(rc, line), 'crash'))


def scenarios(bench):
    yield lambda: regenerated_teacher_data(bench)
    yield from teacher_resume(bench)
    yield from each(bench, teacher_subset, teacher_without_crops,
                    teacher_without_fingerprints, teacher_text_npz)
    yield from teacher_check_dataset(bench)
    yield lambda: documented_clip_command(bench)
