"""Bad inputs of the features added since the first fault page (group
``inputs``): the dataset check, pretrained weights offline, resuming across
class counts, damaged run files, paths with spaces, the benchmark tools'
output folder, the GPU command's folders and collection, a results json
changed under its page, no OpenMMLab stack for the GPU command."""
import json
import os
import os.path as osp
import shutil
import subprocess
import sys

import numpy as np

from spml_mm.datasets import split_train_val
from benchmark.faults.harness import (CONFIG, bad_file, copied_run,
                                      data_copy, each, error_line,
                                      judged, refusal, snapshot,
                                      stopped_with, trained_run,
                                      users_file, work_with)
from benchmark.common import REPO, dev_env


def train_on(bench, name, root, *extra, config=None, epochs=1):
    """tools/train.py on the data at ``root`` in a new work dir."""
    work = osp.join(bench.tmp, f'work_{name}')
    rc, log = bench.run(['tools/train.py', config or bench.config(),
                         '--work-dir', work] + bench.options(
                             data=root, epochs=epochs) + list(extra))
    return work, rc, log


def checkpoints_in(work):
    return [f for f in os.listdir(work) if f.endswith('.pth')
            ] if osp.isdir(work) else []


def duplicated_list(bench):
    def damage(root):
        images = np.load(osp.join(root, 'formatted_train_images.npy'))
        labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
        train_idx, val_idx = split_train_val(len(labels), 0.2, 1200)
        t = next(i for i in train_idx if labels[i].any())
        v = next(i for i in val_idx if (labels[i] != labels[t]).any())
        images[v] = images[t]
        np.save(osp.join(root, 'formatted_train_images.npy'), images)

    root = data_copy(bench, 'dup_data', damage)
    rc, log = bench.run(['tools/check_dataset.py', CONFIG] +
                        bench.options(data=root)[:1] +
                        bench.options(data=root)[2:])
    line = error_line(log, 'is in both the train split')
    yield lambda: ('an image listed twice with other labels, across the '
                   'train/val split: tools/check_dataset.py',
                   'reported: image ' + (line[line.find('is in both'):][:80]
                                         + '...' if line else 'NOT REPORTED'),
                   refusal(rc, line))
    work, rc, log = train_on(bench, 'dup', root)
    line = error_line(log, 'DatasetError: ')
    yield lambda: ('the same list: tools/train.py',
                   f'refused before training: {line[:80]}...; checkpoints: '
                   f'{len(checkpoints_in(work))}',
                   judged(not checkpoints_in(work), refusal(rc, line),
                          'silent wrong answer'))


def class_without_positive(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels.npy')
        labels = np.load(path)
        labels[:, 3] = 0
        np.save(path, labels)

    root = data_copy(bench, 'gap_data', damage)
    rc, log = bench.run(['tools/check_dataset.py', CONFIG] +
                        bench.options(data=root)[:1] +
                        bench.options(data=root)[2:])
    line = error_line(log, 'have no positive label in the training split')
    work, rc2, log2 = train_on(bench, 'gap', root)
    warned = 'have no positive label in the training split' in log2
    return ('class 3 without a positive in the training split',
            f'check_dataset.py warns: {line.split(": ", 2)[-1][:60]}...; '
            f'tools/train.py {"warns and trains" if warned else "SILENT"}',
            judged(rc == 0 and rc2 == 0 and bool(line) and warned,
                   'right result', 'silent wrong answer'))


def gr_q3_inf(bench):
    line, result, _ = stopped_with(
        bench, 'grq3', ['--cfg-options', 'model.head.loss.q3=inf'],
        'q3 must be finite',
        config=bench.config(base='configs/grloss/grloss_vgg11bn_demo.py'))
    return ('GRLoss q3=inf', f'refused: {line.split("Error: ", 1)[-1][:60]}',
            result)


def offline_weights(bench):
    env = dict(TORCH_HOME=osp.join(bench.tmp, 'torch_home'),
               https_proxy='http://127.0.0.1:9', http_proxy='')
    config = bench.config(base='configs/grloss/resnet50_voc.py')
    work = osp.join(bench.tmp, 'offline')
    rc, log = bench.run(['tools/train.py', config, '--work-dir', work],
                        env=env)
    line = error_line(log, 'PretrainedWeightsError: ')
    named = 'resnet50-0676ba61.pth' in line and 'torch_home' in line
    yield lambda: ('configs/grloss/resnet50_voc.py without internet access',
                   'refused: names the file, the torch hub cache to place it '
                   'in and model.backbone.init_cfg.checkpoint' if named else
                   f'{line[:80]}', judged(named, refusal(rc, line), 'crash'))
    missing = osp.join(bench.tmp, 'checkpoints',
                       'efficientnet-lite0_timm.pth')
    rc, log = bench.run([
        'tools/train.py',
        bench.config(base='configs/grloss/efficientnet-lite0_proxy-voc.py'),
        '--work-dir', osp.join(bench.tmp, 'no_lite0'), '--cfg-options',
        f'model.backbone.init_cfg.checkpoint={missing}'
    ])
    line = error_line(log, 'PretrainedWeightsError: ')
    named = 'tools/convert_efficientnet_lite.py' in line
    yield lambda: ('fine-tuned proxy config without the converted '
                   'EfficientNet-Lite0 weights',
                   'refused: names the key and the command that makes the '
                   'file' if named else f'{line[:80]}',
                   judged(named, refusal(rc, line), 'crash'))


def resume_other_classes(bench):
    def fewer(root):
        for split in ('train', 'val'):
            path = osp.join(root, f'formatted_{split}_labels.npy')
            np.save(path, np.load(path)[:, :8])
        if osp.isfile(osp.join(root, 'classes.txt')):
            with open(osp.join(root, 'classes.txt')) as f:
                names = f.read().split()[:8]
            with open(osp.join(root, 'classes.txt'), 'w') as f:
                f.write('\n'.join(names) + '\n')

    ckpt = osp.join(trained_run(bench), 'epoch_1.pth')
    root = data_copy(bench, 'eight_classes', fewer)
    work = osp.join(bench.tmp, 'work_eight')
    rc, log = bench.run(['tools/train.py', bench.config(), '--work-dir', work,
                         '--resume', ckpt] + bench.options(data=root) +
                        ['load_strict=False', 'model.head.num_classes=8'])
    warned = 'the optimizer state of' in log
    ok = rc == 0 and warned and osp.isfile(osp.join(work, 'epoch_2.pth'))
    return ('--resume a 10-class checkpoint under 8 classes, '
            'load_strict=False',
            'trained epoch 2; the head\'s optimizer state restarted with a '
            'warning' if ok else f'FAILED ({error_line(log, "Error")[:70]})',
            judged(ok, 'right result', 'crash'))


def empty_last_checkpoint(bench):
    work = copied_run(bench, 'empty_record')
    open(osp.join(work, 'last_checkpoint'), 'w').close()
    rc, log = bench.train(work, '--resume')
    line = error_line(log, 'is empty')
    return ('an empty last_checkpoint, --resume',
            f'refused: {line.split(work + "/", 1)[-1][:80]}',
            refusal(rc, line))


def text_as_npy(bench):
    def damage(root):
        path = osp.join(root, 'formatted_train_labels_obs.npy')
        np.savetxt(path, np.zeros((3, 10)))

    line, result = bad_file(bench, 'text_obs', damage, 'is not a .npy file')
    return ('a text file saved as formatted_train_labels_obs.npy',
            f'refused: {line.split("Error: ", 1)[-1][:80]}...', result)


def damaged_lock(bench, folder: str, text: str, case: str, width: int):
    """A lock file that cannot be read left in the work dir: refused,
    naming it."""
    work = work_with(bench, folder, 'spml_run.lock', text)
    rc, log = bench.train(work, epochs=1)
    line = error_line(log, 'WorkDirInUseError')
    ok = 'cannot be read' in line and 'host ?' not in line
    return (case, f'refused: spml_run.lock, '
            f'{line[line.find("which cannot be read"):][:width]}...',
            judged(ok, refusal(rc, line), 'crash'))


def unreadable_lock(bench):
    return damaged_lock(bench, 'bad_lock', '{"pid": 12',
                        'a damaged lock file in the work dir', 80)


def non_object_lock(bench):
    return damaged_lock(
        bench, 'list_lock', '[1, 2]',
        'a lock file of valid JSON that is not an object ([1, 2])', 90)


def users_spml_partial(bench):
    return users_file(bench, 'spml_partial', 'notes.spml.partial', 'my notes',
                      'a file of the user named *.spml.partial in the work '
                      'dir')


def spaced_data_root(bench):
    root = data_copy(bench, osp.join('my data', 'demo'))
    work, rc, log = train_on(bench, 'spaced', root)
    ok = rc == 0 and osp.isfile(osp.join(work, 'epoch_1.pth'))
    return ('--cfg-options data_root with a space in the path',
            'trained on it' if ok else
            f'FAILED ({error_line(log, "Error")[:70]})',
            judged(ok, 'right result', 'crash'))


def results_page_default(bench):
    cwd = osp.join(bench.tmp, 'bench_cwd')
    out = osp.join(cwd, 'work_dirs', 'results')
    os.makedirs(out)
    shutil.copy(osp.join(REPO, 'docs', 'results', 'label_bank.json'), out)
    tracked = snapshot(osp.join(REPO, 'docs'))
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmark.label_bank_scale',
         '--render-only'], cwd=cwd, capture_output=True, text=True,
        env=dev_env(), timeout=300)
    kept = snapshot(osp.join(REPO, 'docs')) == tracked
    ok = (proc.returncode == 0 and osp.isfile(osp.join(out, 'label_bank.md'))
          and 'wrote work_dirs/results/label_bank.md' in proc.stdout)
    return ('a benchmark tool run without --out-dir',
            f'wrote work_dirs/results and said so; docs/results '
            f'{"untouched" if kept else "CHANGED"}' if ok else 'FAILED',
            'data lost' if not kept else judged(ok, 'right result', 'crash'))


def gpu_command(*argv, env=None, cwd=REPO):
    """``bash tools/gpu_run.sh ARGV``: exit status and output."""
    proc = subprocess.run(
        ['bash', 'tools/gpu_run.sh', *argv], cwd=cwd, capture_output=True,
        text=True, timeout=600,
        env={**os.environ, 'PYTHON': sys.executable, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def repo_copy(bench, name):
    """The tools, .dev_scripts, docs and configs of the repository in a
    folder of the bench (a tool that writes into its own docs/results writes
    there)."""
    root = osp.join(bench.tmp, name)
    for folder in ('tools', '.dev_scripts', 'docs', 'configs'):
        shutil.copytree(osp.join(REPO, folder), osp.join(root, folder),
                        ignore=shutil.ignore_patterns('_build', 'model_zoo',
                                                      '__pycache__'))
    shutil.copy(osp.join(REPO, 'README.md'), root)
    return root


def tool(root, *args):
    """``python ARGS`` in ``root``, with its .dev_scripts on the path: exit
    status and output."""
    proc = subprocess.run([sys.executable, *args], cwd=root,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              [osp.join(root, '.dev_scripts')] +
                              [p for p in [os.environ.get('PYTHONPATH')]
                               if p])))
    return proc.returncode, proc.stdout + proc.stderr


def users_stage(bench):
    stage = osp.join(bench.tmp, 'my_stage')
    os.makedirs(stage)
    notes = osp.join(stage, 'notes.txt')
    with open(notes, 'w') as f:
        f.write('my notes')
    for fault, out in (('tools/gpu_run.sh --stage DIR, DIR holding a file '
                        'of the user', osp.join(bench.tmp, 'gpu_out')),
                       ('tools/gpu_run.sh --stage DIR --out DIR', stage)):
        rc, log = gpu_command('--device', 'cpu', '--parts', 'tier',
                              '--budget', '5', '--stage', stage, '--out', out)
        line = error_line(log, 'error: --stage')
        kept = osp.isfile(notes) and open(notes).read() == 'my notes'
        yield lambda f=fault, r=rc, ln=line, k=kept: (
            f, f'refused: {ln.split("error: ", 1)[-1][:90]}...; notes.txt '
            'kept' if k else 'notes.txt DELETED',
            refusal(r, ln) if k else 'data lost')


def collected(bench):
    out = osp.join(bench.tmp, 'cpu_out')
    gpu_command('--device', 'cpu', '--parts', 'tier', '--budget', '5',
                '--stage', osp.join(bench.tmp, 'cpu_stage'), '--out', out)
    root = repo_copy(bench, 'collect_copy')
    results = osp.join(root, 'docs', 'results')
    before = snapshot(results)
    rc, log = tool(root, '-m', 'benchmark.gpu_collect', out)
    line = error_line(log, 'error: ')
    kept = snapshot(results) == before
    yield lambda: ('PYTHONPATH=.dev_scripts python -m benchmark.gpu_collect '
                   'of a command run with --device cpu (into docs/results)',
                   f'refused: {line.split("error: ", 1)[-1][:90]}...; the GPU '
                   'pages kept' if kept else 'wrote the CPU run over the '
                   'GPU pages', refusal(rc, line) if kept else
                   'silent wrong answer')
    pack = osp.join(out, 'gpu_run.tar.gz')
    with open(pack, 'r+b') as f:
        f.truncate(osp.getsize(pack) // 2)
    elsewhere = osp.join(bench.tmp, 'elsewhere')
    rc, log = tool(root, '-m', 'benchmark.gpu_collect', out,
                   '--results-dir', elsewhere)
    line = error_line(log, 'error: ')
    named = pack in line and 'Traceback' not in log and not osp.exists(
        elsewhere)
    yield lambda: ('gpu_collect of a gpu_run.tar.gz cut in half',
                   'refused, naming the tarball; nothing written' if named
                   else f'{error_line(log, "Error")[:80]}',
                   judged(named, refusal(rc, line), 'crash'))


def changed_json(bench):
    root = repo_copy(bench, 'tables_copy')
    path = osp.join(root, 'docs', 'results', 'gpu.json')
    with open(path) as f:
        record = json.load(f)
    record['heads']['fp16']['stock']['images_per_s'] *= 2
    with open(path, 'w') as f:
        json.dump(record, f)
    rc, log = tool(root, '.dev_scripts/docs_tables.py', '--check')
    line = error_line(log, 'docs/results/gpu.md: ')
    return ('gpu.json\'s fp16 stock row doubled, gpu.md unchanged: '
            '.dev_scripts/docs_tables.py --check',
            f'named: {line[:90]}...' if line else
            'said every number matches', refusal(rc, line))


def no_openmmlab(bench):
    root = osp.join(bench.tmp, 'bare_checkout')
    os.makedirs(osp.join(root, 'tools'))
    shutil.copy(osp.join(REPO, 'tools', 'gpu_run.sh'),
                osp.join(root, 'tools'))
    rc, log = gpu_command('--out', 'out', env=dict(PYTHON='false'),
                          cwd=root)
    line = error_line(log, '.whl/')
    named = 'bash tools/pack_wheels.sh' in line and osp.isfile(
        osp.join(REPO, 'tools', 'pack_wheels.sh'))
    return ('tools/gpu_run.sh without mmengine/mmpretrain and without '
            '.whl/', 'refused: names bash tools/pack_wheels.sh, which '
            'fills .whl/' if named else f'refused: {line[:90]}',
            judged(named, refusal(rc, line), 'crash'))


def scenarios(bench):
    yield from duplicated_list(bench)
    yield from each(bench, class_without_positive, gr_q3_inf)
    yield from offline_weights(bench)
    yield from each(bench, resume_other_classes, empty_last_checkpoint,
                    text_as_npy, unreadable_lock, non_object_lock,
                    users_spml_partial, spaced_data_root,
                    results_page_default)
    yield from users_stage(bench)
    yield from collected(bench)
    yield from each(bench, changed_json, no_openmmlab)
