"""The label-set tools misused (group ``label_sets``): ``--out`` over an
input or a user's file and a write killed halfway, thresholds of another
model, checkpoints that do not fit the config, calibrations that cannot be
right, an 8000 x 8000 image, ``--cfg-options`` expressions, the smaller
mistakes of issue 58, and a results json changed under a page that prints
part of it. Each runs ``tools/calibrate.py``, ``predict.py``,
``export_onnx.py`` or ``test.py`` as a user does, on AN and GR models
trained for one epoch on the bench's demo data."""
import functools
import hashlib
import json
import os
import os.path as osp
import shutil
import time

import numpy as np

from benchmark.faults.harness import (CONFIG, bad_file, error_line, judged,
                                      refusal, trained_run)

GR_CONFIG = 'configs/grloss/grloss_vgg11bn_demo.py'


def data_options(bench, *extra):
    return ['--cfg-options'] + [
        f'{split}_dataloader.dataset.data_root={bench.data}'
        for split in ('train', 'val', 'test')] + list(extra)


def tool(bench, name, *args, env=None):
    return bench.run([f'tools/{name}.py', *args], env=env)


def sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


@functools.lru_cache()
def models(bench):
    """An AN and a GR checkpoint (one epoch each), each calibrated by
    tools/calibrate.py (prior, m = 2.1): recorded in the checkpoint and
    written beside it (--out)."""
    an = osp.join(trained_run(bench), 'epoch_1.pth')
    gr_work = osp.join(bench.tmp, 'gr_1epoch')
    if not osp.isfile(osp.join(gr_work, 'epoch_1.pth')):
        bench.train(gr_work, config=bench.config(base=GR_CONFIG), epochs=1)
    gr = osp.join(gr_work, 'epoch_1.pth')
    for config, ckpt in ((CONFIG, an), (GR_CONFIG, gr)):
        rc, log = tool(bench, 'calibrate', config, ckpt,
                       '--positives-per-image', '2.1', '--out',
                       thresholds_of(ckpt), *data_options(bench))
        if rc != 0:
            raise RuntimeError(f'calibrating {ckpt} failed: {log[-500:]}')
    return an, gr


def thresholds_of(ckpt):
    return osp.splitext(ckpt)[0] + '_thresholds.json'


def images(bench):
    return osp.join(bench.data, 'images', 'val')


def kept_input(bench, case, name, config, out_of, *args):
    """``--out`` naming one of the run's inputs: refused, the file kept."""
    an, _ = models(bench)
    target = out_of(an)
    before = sha(target)
    rc, log = tool(bench, name, config, an, *args, '--out', target,
                   *data_options(bench))
    line = error_line(log, "is one of this run's inputs")
    kept = sha(target) == before
    return (case, f'refused: "{line[line.find("--out"):][:70]}..."; the '
            f'file {"kept" if kept else "CHANGED"}',
            judged(kept, refusal(rc, line), 'data lost'))


def users_file(bench, ending):
    """A user's existing file as ``--out``: kept without --overwrite."""
    an, _ = models(bench)
    mine = osp.join(bench.tmp, 'users', f'notes{ending}')
    os.makedirs(osp.dirname(mine), exist_ok=True)
    with open(mine, 'w') as f:
        f.write('my own notes\n')
    name = 'export_onnx' if ending == '.onnx' else 'predict'
    inputs = [] if ending == '.onnx' else [images(bench)]
    rc, log = tool(bench, name, CONFIG, an, *inputs, '--out', mine,
                   *data_options(bench))
    line = error_line(log, 'exists and was not written by this tool')
    kept = open(mine).read() == 'my own notes\n'
    rc2, log2 = tool(bench, name, CONFIG, an, *inputs, '--out', mine,
                     '--overwrite', '--verify', '0', *data_options(bench)
                     ) if ending == '.onnx' else tool(
                         bench, name, CONFIG, an, *inputs, '--out', mine,
                         '--overwrite', *data_options(bench))
    replaced = rc2 == 0 and f'replacing {mine} (--overwrite)' in log2
    return (f'tools/{name}.py --out a {ending} file of the user',
            f'refused, the file kept ({"yes" if kept else "NO"}); with '
            f'--overwrite replaced, saying so ({"yes" if replaced else "NO"})',
            judged(kept and replaced, refusal(rc, line),
                   'data lost' if not kept else 'crash'))


def own_file(bench):
    an, _ = models(bench)
    out = osp.join(bench.tmp, 'users', 'preds.csv')
    os.makedirs(osp.dirname(out), exist_ok=True)
    tool(bench, 'predict', CONFIG, an, images(bench), '--out', out)
    rc, log = tool(bench, 'predict', CONFIG, an, images(bench), '--out', out)
    said = f'replacing {out}, which this tool wrote earlier' in log
    return ('tools/predict.py --out its own earlier predictions',
            f'replaced{", saying so" if said else " IN SILENCE"}',
            judged(rc == 0 and said, 'right result', 'silent wrong answer'))


def wrong_ending(bench):
    an, _ = models(bench)
    rc, log = tool(bench, 'export_onnx', CONFIG, an, '--out',
                   osp.join(bench.tmp, 'users', 'model.pt'),
                   *data_options(bench))
    line = error_line(log, 'must end with .onnx')
    return ('tools/export_onnx.py --out model.pt', f'refused: '
            f'"{line[line.find("--out"):][:70]}"', refusal(rc, line))


def killed_write(bench):
    """calibrate.py killed (SIGKILL) halfway through writing its file,
    then run again."""
    an, _ = models(bench)
    path = thresholds_of(an)
    before = sha(path)
    config = bench.config()
    rc, _ = tool(bench, 'calibrate', config, an, '--positives-per-image',
                 '2.2', '--out', path, *data_options(bench),
                 env=dict(FAULT='kill_in_write', FAULT_AT='1'))
    intact = sha(path) == before and json.load(open(path))[
        'positives_per_image'] == 2.1
    left = [f for f in os.listdir(osp.dirname(path)) if 'partial' in f]
    rc2, _ = tool(bench, 'calibrate', CONFIG, an, '--positives-per-image',
                  '2.1', '--out', path, *data_options(bench))
    after = [f for f in os.listdir(osp.dirname(path)) if 'partial' in f]
    ok = rc != 0 and intact and rc2 == 0 and not after
    return ('tools/calibrate.py killed (SIGKILL) halfway through writing '
            'the thresholds file, then run again',
            f'killed ({rc}); the previous file '
            f'{"intact" if intact else "DAMAGED"}, {len(left)} partial file '
            f'left, removed by the next run ({"yes" if not after else "NO"})',
            judged(ok, 'right result', 'data lost'))


def labels_per_image(path):
    with open(path) as f:
        found = json.load(f)
    return np.mean([len(p['labels']) for p in found['predictions']])


def copied_checkpoint(bench):
    """The GR checkpoint (without the decision calibrate.py records in it,
    as written before it did) copied over the AN one, whose thresholds lie
    beside it."""
    import torch
    an, gr = models(bench)
    folder = osp.join(bench.tmp, 'copied')
    os.makedirs(folder, exist_ok=True)
    model = osp.join(folder, 'model.pth')
    plain = torch.load(gr, map_location='cpu', weights_only=True)
    plain['meta'].pop('spml_decision', None)
    torch.save(plain, model)
    shutil.copy(thresholds_of(an), thresholds_of(model))
    rc, log = tool(bench, 'predict', GR_CONFIG, model, images(bench))
    line = error_line(log, 'was calibrated for another model')
    out = osp.join(folder, 'forced.json')
    tool(bench, 'predict', GR_CONFIG, model, images(bench),
         '--allow-other-thresholds', '--out', out)
    own = osp.join(folder, 'own.json')
    tool(bench, 'predict', GR_CONFIG, gr, images(bench), '--out', own)
    forced = labels_per_image(out) if osp.isfile(out) else float('nan')
    right = labels_per_image(own) if osp.isfile(own) else float('nan')
    return ('a GR checkpoint copied over model.pth beside the AN model\'s '
            'model_thresholds.json: tools/predict.py',
            f'refused: "...{line[line.find("weights:"):][:60]}..."; applied '
            f'anyway it gives {forced:.2f} labels per image, GR\'s own '
            f'calibration {right:.2f}', refusal(rc, line))


def other_thresholds_in_test(bench):
    an, gr = models(bench)
    args = [CONFIG, an, '--thresholds', thresholds_of(gr), '--work-dir',
            osp.join(bench.tmp, 'test_other')] + data_options(bench)
    rc, log = tool(bench, 'test', *args)
    line = error_line(log, 'was calibrated for another model')
    rc2, log2 = tool(bench, 'test', *args[:-4], '--allow-other-thresholds',
                     *data_options(bench))
    warned = 'WARNING: deciding by' in log2 and rc2 == 0
    return ('tools/test.py --thresholds of the GR calibration on the AN '
            'checkpoint', f'refused: "...{line[line.find("weights:"):][:50]}'
            f'..."; --allow-other-thresholds tests with a WARNING line '
            f'({"yes" if warned else "NO"})',
            judged(warned, refusal(rc, line), 'silent wrong answer'))


def misfit(bench, case, name, config, *options):
    an, _ = models(bench)
    extra = {'predict': [images(bench), '--thresholds', 'none'],
             'calibrate': ['--positives-per-image', '2'],
             'export_onnx': ['--out', osp.join(bench.tmp, 'misfit.onnx'),
                             '--thresholds', 'none']}[name]
    rc, log = tool(bench, name, config, an, *extra,
                   *data_options(bench, *options))
    line = error_line(log, 'does not fit the model of this config')
    detail = log[log.find('  - ', log.find('does not fit')):].split(
        '\n')[0].strip() if line else ''
    clear = 'Traceback' not in log and 'load_strict=False' in log
    return (case, f'refused: "{detail[:70]}...", with load_strict=False'
            if clear else error_line(log, 'Error')[:90],
            judged(clear, refusal(rc, line), 'crash'))


def refused_calibration(bench, case, words, *args):
    an, _ = models(bench)
    out = osp.join(bench.tmp, 'cal', 'thresholds.json')
    rc, log = tool(bench, 'calibrate', CONFIG, an, *args, '--out', out,
                   *data_options(bench))
    line = error_line(log, words)
    written = osp.exists(out)
    return (case, f'refused: "{line[:80]}..."; nothing written'
            if not written else 'WRITTEN',
            judged(not written, refusal(rc, line), 'silent wrong answer'))


def f1_without_positive(bench):
    an, _ = models(bench)
    out = osp.join(bench.tmp, 'cal', 'f1.json')
    rc, log = tool(bench, 'calibrate', CONFIG, an, '--method', 'f1', '--out',
                   out, *data_options(
                       bench, 'val_dataloader.dataset.val_full_subset=2',
                       'val_dataloader.dataset.val_labels=observed'))
    line = error_line(log, 'classes have no positive among')
    return ('--method f1 on 2 fully labelled images (classes without a '
            'positive)', f'refused: "{line[line.find("--method"):][:80]}'
            '..."; nothing written' if not osp.exists(out) else 'WRITTEN',
            judged(not osp.exists(out), refusal(rc, line),
                   'silent wrong answer'))


def json_true(bench):
    an, _ = models(bench)
    with open(thresholds_of(an)) as f:
        record = json.load(f)
    record['thresholds'][0] = True
    path = osp.join(bench.tmp, 'cal', 'true.json')
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(record, f)
    rc, log = tool(bench, 'predict', CONFIG, an, images(bench),
                   '--thresholds', path)
    line = error_line(log, 'thresholds must be numbers in [0, 1]')
    return ('a thresholds file whose threshold is JSON true',
            f'refused: "...{line[line.find("thresholds must"):][:70]}"',
            refusal(rc, line))


def huge_image(bench):
    from PIL import Image
    an, _ = models(bench)
    big = osp.join(bench.tmp, 'big', 'huge.png')
    os.makedirs(osp.dirname(big), exist_ok=True)
    Image.new('1', (8000, 8000)).save(big)
    start = time.time()
    rc, log = tool(bench, 'predict', CONFIG, an, big, '--thresholds', 'none')
    seconds = time.time() - start
    line = error_line(log, 'cannot be read: 8000 x 8000 pixels')
    return ('tools/predict.py on one 8000 x 8000 PNG (the demo config has no '
            'Resize)', f'named before decoding: "8000 x 8000 pixels, more '
            f'than 4194304: the config\'s test pipeline has no Resize..." '
            f'(exit {rc}, {seconds:.0f} s)' if line else 'NOT NAMED',
            refusal(rc, line))


def expression_option(bench):
    rc, log = bench.run(['tools/train.py', CONFIG, '--work-dir',
                         osp.join(bench.tmp, 'expression'), '--cfg-options',
                         "model.head.loss=dict(type='ANLoss')"])
    line = error_line(log, 'is an expression, which is not parsed')
    return ("--cfg-options \"model.head.loss=dict(type='ANLoss')\" (no comma)",
            f'refused: "{line[line.find("--cfg-options"):][:80]}..."'
            if line else error_line(log, 'Error')[:90], refusal(rc, line))


def small(bench, case, words, *args, name='predict'):
    an, _ = models(bench)
    rc, log = tool(bench, name, CONFIG, an, *args)
    line = error_line(log, words)
    shown = line[line.find(words):] if line else error_line(log, 'Error')
    return (case, f'refused: "{shown[:90]}"', refusal(rc, line))


def listed_missing(bench):
    an, _ = models(bench)
    listed = osp.join(bench.tmp, 'lists', 'images.txt')
    os.makedirs(osp.dirname(listed), exist_ok=True)
    with open(listed, 'w') as f:
        f.write('missing.png\n')
    rc, log = tool(bench, 'predict', CONFIG, an, listed)
    line = error_line(log, 'listed in')
    named = f'listed in {listed}, line 1' in line
    return ('a missing path of a .txt list', 'named with the list and its '
            'line' if named else f'{line[:80]}',
            judged(named, refusal(rc, line), 'crash'))


def stale_image_cache(bench):
    from spml_mm.datasets.image_cache import cache_options
    root = osp.join(bench.tmp, 'cache_data')
    shutil.copytree(bench.data, root)
    cache = osp.join(root, 'image_cache', 'cache.npy')
    rc, log = bench.run(['tools/cache_images.py', CONFIG, '--out', cache] +
                        data_options(bench)[:1] +
                        [o.replace(bench.data, root)
                         for o in data_options(bench)[1:]])
    if rc != 0:
        return ('a stale image cache', f'cache_images.py failed: '
                f'{log[-200:]}', 'crash')
    image = sorted(os.listdir(osp.join(root, 'images', 'train')))[-1]
    os.utime(osp.join(root, 'images', 'train', image), (0, 0))
    work = osp.join(bench.tmp, 'stale_cache')
    rc, log = bench.run(['tools/train.py', CONFIG, '--work-dir', work] +
                        bench.options(data=root, epochs=1) +
                        cache_options(cache))
    line = error_line(log, 'is stale for the')
    trained = 'Epoch(train)' in log
    return ('an image cache written before an image changed, then '
            'tools/train.py with it', 'refused before the first batch '
            f'({bench.seconds:.0f} s): '
            f'"...{line[line.find("is stale"):][:70]}..."' if line and not
            trained else f'{error_line(log, "Error")[:90]}',
            judged(not trained, refusal(rc, line), 'crash'))


def gpu_fast_on_plain_config(bench):
    an, _ = models(bench)
    rc, log = tool(bench, 'test', CONFIG, an, '--thresholds', 'none',
                   '--work-dir', osp.join(bench.tmp, 'gpu_fast_plain'),
                   *data_options(bench, 'gpu_fast.image_cache=cache.npy'))
    logged = "gpu_fast (image_cache='cache.npy') is ignored" in log
    return ('gpu_fast.image_cache on a plain config: tools/test.py',
            f'{"logged: gpu_fast ... is ignored, with the fix" if logged else "IGNORED IN SILENCE"}; '
            f'tested {"on" if rc == 0 else "FAILED"}',
            judged(logged and rc == 0, 'right result',
                   'silent wrong answer'))


def stale_observed(bench):
    def damage(root):
        labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
        np.save(osp.join(root, 'formatted_train_labels_obs.npy'),
                labels[:-5])

    line, result = bad_file(bench, 'stale_obs', damage, 'it is stale')
    named = 'formatted_train_labels_obs.npy holds' in line
    return ('a stale formatted_train_labels_obs.npy (fewer rows than the '
            'labels)', f'refused ({bench.seconds:.0f} s): '
            f'"...{line[line.find("formatted_train"):][:80]}'
            '..."' if named else line[:90],
            judged(named, result, 'crash'))


def changed_before_json(bench):
    from benchmark.faults.inputs import repo_copy, tool as repo_tool
    root = repo_copy(bench, 'label_bank_copy')
    path = osp.join(root, 'docs', 'results', 'label_bank_update_before.json')
    with open(path) as f:
        record = json.load(f)
    record['banks'][0]['update'][1] += 0.1
    with open(path, 'w') as f:
        json.dump(record, f)
    rc, log = repo_tool(root, '.dev_scripts/docs_tables.py', '--check')
    line = error_line(log, 'docs/results/label_bank_update.md: ')
    return ('label_bank_update_before.json changed, label_bank_update.md '
            'unchanged: .dev_scripts/docs_tables.py --check',
            f'named: {line[:90]}...' if line else
            'said every number matches', refusal(rc, line))


def scenarios(bench):
    yield lambda: kept_input(bench, 'tools/calibrate.py --out CHECKPOINT',
                             'calibrate', CONFIG, lambda c: c,
                             '--positives-per-image', '2.1')
    yield lambda: kept_input(bench, 'tools/export_onnx.py --out CHECKPOINT',
                             'export_onnx', CONFIG, lambda c: c)
    yield lambda: kept_input(
        bench, 'tools/predict.py --out <checkpoint>_thresholds.json (the '
        'decision it applies)', 'predict', CONFIG, thresholds_of,
        images(bench))
    for ending in ('.csv', '.json', '.onnx'):
        yield lambda e=ending: users_file(bench, e)
    yield lambda: own_file(bench)
    yield lambda: wrong_ending(bench)
    yield lambda: killed_write(bench)
    yield lambda: copied_checkpoint(bench)
    yield lambda: other_thresholds_in_test(bench)
    yield lambda: misfit(bench, 'tools/predict.py: a VGG-11 checkpoint '
                         'under a VGG-13 config', 'predict', CONFIG,
                         'model.backbone.depth=13')
    yield lambda: misfit(bench, 'tools/predict.py: a 10-class checkpoint '
                         'under 7 classes', 'predict', CONFIG,
                         'model.head.num_classes=7')
    yield lambda: misfit(bench, 'tools/calibrate.py: a VGG-11 checkpoint '
                         'under a VGG-13 config', 'calibrate', CONFIG,
                         'model.backbone.depth=13')
    yield lambda: misfit(bench, 'tools/export_onnx.py: a VGG-11 checkpoint '
                         'under a VGG-13 config', 'export_onnx', CONFIG,
                         'model.backbone.depth=13')
    yield lambda: misfit(bench, 'tools/calibrate.py: a plain AN checkpoint '
                         'under the VLPL (teacher) config', 'calibrate',
                         'configs/vlpl/vlpl_vgg11bn_demo.py')
    yield lambda: refused_calibration(
        bench, '--positives-per-image 12 with 10 classes',
        'exceeds the 10 classes', '--positives-per-image', '12')
    yield lambda: refused_calibration(
        bench, '--method topk --positives-per-image 11 with 10 classes',
        'exceeds the 10 classes', '--method', 'topk',
        '--positives-per-image', '11')
    yield lambda: f1_without_positive(bench)
    yield lambda: json_true(bench)
    yield lambda: huge_image(bench)
    yield lambda: expression_option(bench)
    yield lambda: small(bench, 'tools/predict.py --batch-size 0',
                        '--batch-size must be >= 1', images(bench),
                        '--batch-size', '0')
    yield lambda: small(bench, 'tools/predict.py --device cuda on a machine '
                        'without a GPU', 'no CUDA GPU is visible',
                        images(bench), '--device', 'cuda',
                        ) if not _cuda() else (
        'tools/predict.py --device cuda on a machine without a GPU',
        'not tried: this machine has a GPU', 'right result')
    yield lambda: small(bench, "tools/predict.py 'images/*.png' (a quoted "
                        'glob)', 'a glob pattern is not expanded',
                        osp.join(images(bench), '*.png'))
    yield lambda: listed_missing(bench)
    yield lambda: small(bench, '--cfg-options model.head.thr=0.3 with a '
                        'thresholds file beside the checkpoint',
                        'both set the label-set decision', images(bench),
                        '--cfg-options', 'model.head.thr=0.3')
    yield lambda: stale_image_cache(bench)
    yield lambda: gpu_fast_on_plain_config(bench)
    yield lambda: stale_observed(bench)
    yield lambda: changed_before_json(bench)


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()
