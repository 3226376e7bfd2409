"""How good must a teacher be? VLPL and AEVLP with synthetic teachers of
known quality against the methods without a teacher, on the VOC-like proxy
in the linear regime.

A synthetic teacher (:mod:`spml_mm.benchmarks.synthetic_teacher`) scores the
proxy's training images from their true labels with a chosen noise level,
from noise alone (its mAP is the class prior) to none (mAP 100); its
quality is reported as its own mAP on the training images. At each level
VLPL and AEVLP train on its pseudo-labels; AN, GR and EM + APL, which read
no teacher, train once per seed. The crossing point is the teacher mAP at
which a teacher method's mean test mAP reaches the best method without a
teacher (linear between levels).

The proxy is at ``--fraction`` of its size (default 0.2, a fifth, where the
other methods' learning rates were searched: the linear configs' rates).
Results go to ``teacher_quality.{json,md,png}`` under ``--out`` (default
``work_dirs/teacher_quality``; ``docs/results`` for the project's page).
Runs already in the json are kept, so an interrupted sweep resumes.

``--real-teacher`` adds a teacher trained here: the full-label linear model
(AN's ``-linear-full`` config) trained on a second instance of the proxy
made with another generator seed (the same classes and fraction, other
images and scenes; the seed also deals the class frequencies anew), which
scores the main proxy's training images through ``tools/score_teacher.py
--source model``. On cached features it scores whole images only, so
AEVLP's DAMP reads each image as its one crop (DAMP then gives the
whole-image pseudo-labels). Its results join the same json (key
``real_teacher``) and page.

``--model-teacher RECORD`` makes the real teacher of the fine-tuned
evidence (``tools/gpu_run.sh`` queues it): the full-label model fine-tuned
on the second instance (``--cfg-options``: its learning rate and loaders),
scoring the proxy's training images, whole and in 4 x 4 crops, into
``--teacher-out`` for VLPL and AEVLP; its record goes to ``RECORD``.

Examples:
    python -m tools.benchmark.teacher_quality --out docs/results
    # a synthetic teacher's score file for a config's training set
    python -m tools.benchmark.teacher_quality --write-teacher \
        configs/vlpl/vlpl_vgg11bn_demo.py --noise 0.3 \
        --teacher-out data/demo/teacher_scores/synthetic.npz
    # a real teacher trained on another instance of the proxy
    python -m tools.benchmark.teacher_quality --out docs/results \
        --real-teacher
    # the fine-tuned one of the full-size evidence, at the full-label
    # bound's searched rate
    python -m tools.benchmark.teacher_quality --model-teacher teacher.json \
        --fraction 1 --teacher-out data/proxy-voc/teacher_scores/x.npz \
        --cfg-options optim_wrapper.optimizer.lr=0.001
"""
import argparse
import json
import os
import os.path as osp
import sys

import numpy as np
from mmengine.utils import ProgressBar

from tools.benchmark.accuracy import (LOADERS, cache_file_options,
                                      feature_cache, prepare_suite,
                                      proxy_options, proxy_root, run,
                                      select_options, suite_config,
                                      train_and_test)
from tools.common import REPO, command_line, machine_summary, write_json

#: noise levels of the synthetic teacher, from useless to perfect
LEVELS = (1.0, 0.45, 0.35, 0.28, 0.2, 0.0)
#: methods that read the teacher, with their config and score-file kind
TEACHER_METHODS = {
    'vlpl': ('configs/vlpl/efficientnet-lite0-linear_proxy-voc.py', 0),
    'aevlp': ('configs/aevlp/efficientnet-lite0-linear_proxy-voc.py', 4),
}
#: methods without a teacher
BASELINES = ('an', 'gr', 'em_apl')
NAMES = dict(an='AN', gr='GR', em_apl='EM + APL', vlpl='VLPL', aevlp='AEVLP')
SUITE = 'proxy-voc'
#: generator seed of the proxy instance the real teacher trains on
TEACHER_DATA_SEED = 1
#: the grid of crops a teacher of images scores (AEVLP's on VOC): one score
#: file serves VLPL (whole images) and AEVLP (with crops)
CROP_GRID = 4


def training_set(config, options=()):
    """The training dataset a config builds (with ``--cfg-options``)."""
    from mmengine.config import Config, DictAction
    from mmpretrain.registry import DATASETS

    import spml_mm  # noqa: F401
    cfg = Config.fromfile(osp.join(REPO, config))
    if options:
        parser = argparse.ArgumentParser()
        parser.add_argument('--o', nargs='+', action=DictAction)
        cfg.merge_from_dict(parser.parse_args(['--o', *options]).o)
    dataset = dict(cfg.train_dataloader.dataset)
    dataset['data_root'] = osp.join(REPO, dataset['data_root'])
    return DATASETS.build(dataset)


def write_teacher(config, noise, path, crops, seed=0, options=()):
    """Write a synthetic teacher for a config's training set; return its
    mAP (percent) on those images."""
    from spml_mm.benchmarks.synthetic_teacher import (full_label_matrix,
                                                      write_synthetic_teacher)
    from spml_mm.evaluation.metrics import mean_average_precision
    dataset = training_set(config, options)
    scores = write_synthetic_teacher(dataset, path, noise, seed, crops)
    return float(mean_average_precision(scores, full_label_matrix(dataset)))


def teacher_files(work_root, level):
    """The synthetic teacher's score files of a noise level, without and
    with crops (keyed by the number of crops)."""
    base = osp.join(REPO, work_root, 'teachers', f'noise{level:g}')
    return {0: base + '.npz', 4: base + '_crops.npz'}


def teacher_data(fraction, regime):
    """The ``--cfg-options`` that point a config at the second proxy
    instance the real teacher trains on (generator seed
    :data:`TEACHER_DATA_SEED`, the main proxy's fraction and image size),
    made if missing; in the linear regime with its feature cache."""
    root = (f'data/{SUITE}-seed{TEACHER_DATA_SEED}' +
            ('' if fraction == 1 else f'-f{fraction:g}'))
    if not osp.isfile(osp.join(REPO, root, 'formatted_val_labels_obs.npy')):
        run([sys.executable, 'tools/make_proxy_data.py', '--like', 'voc',
             '--fraction', f'{fraction:g}', '--seed', str(TEACHER_DATA_SEED),
             '--image-size', str(image_side(fraction)), '--out-dir', root])
    data = [f'{loader}.dataset.data_root={root}' for loader in LOADERS]
    if regime != 'linear':
        return data
    cache = osp.join(root, 'features', osp.basename(feature_cache(SUITE)))
    if not osp.isfile(osp.join(REPO, cache)):
        run([sys.executable, 'tools/cache_features.py',
             suite_config(SUITE, 'an', 'finetune'), '--threads', '1',
             '--out', cache, '--cfg-options', *data])
    return data + cache_file_options(suite_config(SUITE, 'full', 'linear'),
                                     cache)


def image_side(fraction):
    """The side of the main proxy's images (its ``statistics.json``)."""
    with open(osp.join(REPO, proxy_root(SUITE, fraction),
                       'statistics.json')) as f:
        return json.load(f)['arguments']['image_size']


def score_images(config, teacher_config, teacher_dir, out, options,
                 crops=0, image_size=None):
    """Score ``config``'s training images (``options`` point it at its
    data) with the teacher trained in ``teacher_dir`` into the score file
    ``out`` (``tools/score_teacher.py --source model``), with ``crops``
    the crops of that grid too, fed at ``image_size``."""
    from spml_mm.utils import find_best_checkpoint
    best = find_best_checkpoint(osp.join(REPO, teacher_dir))
    grid = ['--crops', str(crops), '--image-size', str(image_size)] \
        if crops else []
    run([sys.executable, 'tools/score_teacher.py', config, '--source',
         'model', '--teacher-config', teacher_config, '--checkpoint',
         osp.relpath(best, REPO), '--out', out, *grid,
         *(['--cfg-options', *options] if options else [])])


def teacher_map(config, path, options):
    """The mAP (percent) of the score file ``path`` on ``config``'s training
    images."""
    from spml_mm.benchmarks.synthetic_teacher import full_label_matrix
    from spml_mm.datasets.teacher_scores import load_teacher_scores
    from spml_mm.evaluation.metrics import mean_average_precision
    dataset = training_set(config, options)
    scores = load_teacher_scores(osp.join(REPO, path), dataset)
    return float(mean_average_precision(scores.numpy(),
                                        full_label_matrix(dataset)))


def real_teacher(json_path, work_root, fraction, seeds, command):
    """Train the real teacher on a second proxy instance, score the main
    proxy's training images with it and train the teacher methods on its
    scores; each step is skipped when its output exists."""
    data = teacher_data(fraction, 'linear')
    with open(json_path) as f:
        results = json.load(f)
    entry = results.setdefault('real_teacher', {})
    teacher_config = suite_config(SUITE, 'full', 'linear')
    teacher_dir = osp.join(work_root, 'real_teacher', 'teacher')
    if 'own_test_mAP' not in entry:
        entry['own_test_mAP'], _ = train_and_test(
            teacher_config, teacher_dir, 0,
            data + select_options(teacher_config, 'spml/mAP'))
        entry.update(config=teacher_config, data_seed=TEACHER_DATA_SEED,
                     command=command)
        write_json(json_path, results)
    files = {0: osp.join(work_root, 'real_teacher', 'scores.npz'),
             4: osp.join(work_root, 'real_teacher', 'scores_as_crop.npz')}
    vlpl_config = TEACHER_METHODS['vlpl'][0]
    options = proxy_options(SUITE, fraction, vlpl_config)
    if not osp.isfile(osp.join(REPO, files[0])):
        score_images(vlpl_config, teacher_config, teacher_dir, files[0],
                     options)
    if not osp.isfile(osp.join(REPO, files[4])):
        from spml_mm.datasets.teacher_scores import (read_teacher_scores,
                                                     save_teacher_scores)
        table = read_teacher_scores(osp.join(REPO, files[0]))
        meta = dict(table['meta'], whole_image_as_crop=files[0])
        save_teacher_scores(osp.join(REPO, files[4]), table['scores'],
                            table['img_paths'], table['classes'], meta,
                            crop_scores=table['scores'][:, None],
                            img_fingerprints=table['img_fingerprints'])
    if 'mAP' not in entry:
        entry['mAP'] = teacher_map(vlpl_config, files[0], options)
        write_json(json_path, results)
    print(f'real teacher: mAP {entry["mAP"]:.2f} on the training images, '
          f'{entry["own_test_mAP"]:.2f} on its own test split')
    for seed in seeds:
        for method, (config, crops) in TEACHER_METHODS.items():
            if str(seed) in entry.get(method, {}):
                continue
            mAP, seconds = train_and_test(
                config, osp.join(work_root, 'real_teacher', method,
                                 f'seed{seed}'), seed,
                [f'model.head.label_bank.score_file={files[crops]}'] +
                proxy_options(SUITE, fraction, config) +
                select_options(config, 'spml/mAP'))
            entry.setdefault(method, {})[str(seed)] = dict(mAP=mAP,
                                                           seconds=seconds)
            write_json(json_path, results)
            print(f'real teacher, {NAMES[method]} seed {seed}: {mAP:.2f}')
    return results


def model_teacher(record, fraction, work_root, score_file, options,
                  command):
    """The real teacher of the fine-tuned evidence (``tools/gpu_run.sh``):
    the full-label model fine-tuned on the second proxy instance
    (``options``: its learning rate, loaders), scoring the main proxy's
    training images, whole and in :data:`CROP_GRID` x :data:`CROP_GRID`
    crops, into ``score_file`` (VLPL reads the whole images' scores, AEVLP
    the crops' too). Its record (config, data seed, options, test mAP on
    its own instance, mAP on the scored images) goes to the json
    ``record``; each step is skipped when its output exists."""
    entry = {}
    if osp.isfile(record):
        with open(record) as f:
            entry = json.load(f)
    config = suite_config(SUITE, 'full', 'finetune')
    teacher_dir = osp.join(work_root, 'teacher')
    if 'own_test_mAP' not in entry:
        entry['own_test_mAP'], _ = train_and_test(
            config, teacher_dir, 0,
            teacher_data(fraction, 'finetune') + list(options) +
            select_options(config, 'spml/mAP'))
        entry.update(config=config, data_seed=TEACHER_DATA_SEED,
                     options=list(options), command=command)
        write_json(record, entry)
    scored = suite_config(SUITE, 'an', 'finetune')
    data = proxy_options(SUITE, fraction)
    if not osp.isfile(osp.join(REPO, score_file)):
        score_images(scored, config, teacher_dir, score_file, data,
                     CROP_GRID, image_side(fraction))
    if 'mAP' not in entry:
        entry.update(mAP=teacher_map(scored, score_file, data),
                     score_file=score_file, crop_grid=CROP_GRID)
        write_json(record, entry)
    print(f'model teacher: mAP {entry["mAP"]:.2f} on the training images, '
          f'{entry["own_test_mAP"]:.2f} on its own test split')
    return entry


def summarize_runs(runs):
    """Mean, std and number of the test mAPs of runs keyed by seed."""
    values = [r['mAP'] for r in runs.values()]
    return dict(mean=float(np.mean(values)), std=float(np.std(values)),
                n=len(values))


def summarize(results):
    """Mean and std of the test mAP per method and level."""
    stats = summarize_runs
    rows = dict(baselines={
        m: stats(results[m]) for m in BASELINES if results.get(m)
    })
    rows['teachers'] = {}
    for method in TEACHER_METHODS:
        for level, runs in sorted(results.get(method, {}).items(),
                                  key=lambda kv: -float(kv[0])):
            rows['teachers'].setdefault(method, {})[level] = dict(
                stats(runs), teacher_mAP=results['teachers'][level])
    return rows


def on_curve(levels, teacher_map):
    """A method's mean test mAP with a synthetic teacher of mAP
    ``teacher_map``, linear between the measured levels."""
    points = sorted((v['teacher_mAP'], v['mean']) for v in levels.values())
    return float(np.interp(teacher_map, *zip(*points)))


def real_teacher_lines(real, real_rows, synthetic, teacher_maps, best_name,
                       best):
    """The page's section on the real teacher."""
    below = [lv for lv, t in teacher_maps.items() if t <= real['mAP']]
    above = [lv for lv, t in teacher_maps.items() if t > real['mAP']]
    between = ' and '.join(
        f'noise {lv} (teacher mAP {teacher_maps[lv]:.2f})' for lv in (
            [max(below, key=teacher_maps.get)] if below else []) + (
            [min(above, key=teacher_maps.get)] if above else []))
    lines = [
        '', '## A real teacher', '',
        f'Written by `{real["command"]}`.', '',
        'The teacher is a model trained here: the full-label linear model '
        f'(`{real["config"]}`, every true label) trained on a second '
        f'instance of the proxy, made with generator seed '
        f'{real["data_seed"]} at the same fraction (the same classes; other '
        'images and scenes; the seed also deals the class frequencies '
        "anew), then scoring this proxy's training images with its sigmoid "
        '(`tools/score_teacher.py --source model`). Its mAP on those images '
        f"is {real['mAP']:.2f} (on its own instance's test split "
        f"{real['own_test_mAP']:.2f}), between the synthetic teachers of "
        f'{between}. On cached features no crops can be scored: AEVLP\'s '
        "DAMP reads each image's whole-image scores as its one crop, so its "
        'pseudo-labels are those of the whole image. The scores are '
        "sigmoids, not a softmax over classes like CLIP's and the synthetic "
        "teachers', and the configs' thresholds (set for a softmax) cut "
        'them unchanged.', '',
        '| method | test mAP | seeds | a synthetic teacher of that mAP |',
        '| --- | --- | --- | --- |'
    ]
    for m, v in real_rows.items():
        lines.append(
            f'| {NAMES[m]} | {v["mean"]:.2f} +- {v["std"]:.2f} | {v["n"]} | '
            f'{on_curve(synthetic[m], real["mAP"]):.2f} |')
    lines += ['', 'The last column is the synthetic curve at the real '
              "teacher's mAP (linear between the measured levels). The best "
              f'method without a teacher, {NAMES[best_name]}, has '
              f'{best:.2f}: ' + '; '.join(
                  f'{NAMES[m]} with the real teacher is '
                  f'{v["mean"] - best:+.2f} from it'
                  for m, v in real_rows.items()) + '.']
    gains = {m: v['mean'] - on_curve(synthetic[m], real['mAP'])
             for m, v in real_rows.items()}
    if all(g > 0 for g in gains.values()):
        lines += ['', 'Every method gains more from the real teacher than '
                  'from a synthetic teacher of the same mAP: its mAP alone '
                  'does not place a teacher on the curve. Its errors are '
                  "a model's, not uniform noise, its scores are another "
                  "form, and it brings what it learned from the other "
                  "instance's labelled images."]
    return lines


def crossing(levels, best):
    """Teacher mAP where a method's mean test mAP first reaches ``best``,
    linear between levels sorted by teacher mAP; None if it never does."""
    points = sorted((v['teacher_mAP'], v['mean']) for v in levels.values())
    for (t0, m0), (t1, m1) in zip(points, points[1:]):
        if m0 >= best:
            return t0
        if m1 >= best:
            return t0 + (best - m0) * (t1 - t0) / (m1 - m0)
    return points[0][0] if points and points[0][1] >= best else None


def write_outputs(results, out_dir, command, fraction):
    rows = summarize(results)
    baselines = rows['baselines']
    best_name = max(baselines, key=lambda m: baselines[m]['mean'])
    best = baselines[best_name]['mean']
    ceiling = 'accuracy_proxy-voc_linear{}.md'.format(
        '' if fraction == 1 else f'-f{fraction:g}')
    lines = [
        '# How good must a teacher be?', '',
        f'Written by `{command}`; {machine_summary()}', '',
        f'VOC-like proxy at {fraction:g} of its size, linear regime (frozen '
        'EfficientNet-Lite0 features, the configs '
        '`configs/*/efficientnet-lite0-linear_proxy-voc.py`), '
        'test mAP (%) of the best validation epoch, mean +- std over seeds. '
        'The teachers are synthetic (spml_mm/benchmarks/synthetic_teacher.py'
        '): scores from the true labels with noise of a chosen level, as a '
        "softmax over classes like CLIP's, so the releases' thresholds "
        "apply; a teacher's quality is its own mAP on the training images. "
        'Methods: [docs/methods/teacher_pseudo_labels.md]'
        '(../methods/teacher_pseudo_labels.md). Training on every '
        'true label (the ceiling) on the same proxy: `full` in '
        f'[{ceiling}]({ceiling}).', '',
        '## Without a teacher', '', '| method | test mAP | seeds |',
        '| --- | --- | --- |'
    ]
    for m, v in baselines.items():
        lines.append(f'| {NAMES[m]} | {v["mean"]:.2f} +- {v["std"]:.2f} | '
                     f'{v["n"]} |')
    lines += ['', '## With a teacher', '',
              '| noise | teacher mAP | ' + ' | '.join(
                  NAMES[m] for m in rows['teachers']) + ' |',
              '| --- | --- |' + ' --- |' * len(rows['teachers'])]
    levels = sorted({lv for t in rows['teachers'].values() for lv in t},
                    key=lambda lv: -float(lv))
    for level in levels:
        cells = []
        for m, by_level in rows['teachers'].items():
            v = by_level.get(level)
            cells.append('' if v is None else
                         f'{v["mean"]:.2f} +- {v["std"]:.2f} ({v["n"]})')
        lines.append(f'| {float(level):g} | '
                     f'{results["teachers"][level]:.2f} | ' +
                     ' | '.join(cells) + ' |')
    lines += ['', '## Where a teacher starts to pay', '',
              f'The best method without a teacher is {NAMES[best_name]} '
              f'({best:.2f}). A teacher method reaches it from the teacher '
              'mAP below (linear between the measured levels):', '']
    for m, by_level in rows['teachers'].items():
        point = crossing(by_level, best)
        lines.append(f'- {NAMES[m]}: ' + (
            'not reached at any measured level' if point is None else
            f'teacher mAP {point:.1f}'))
    real = results.get('real_teacher', {})
    real_rows = {m: summarize_runs(real[m]) for m in TEACHER_METHODS
                 if real.get(m)}
    if 'mAP' in real:
        lines += real_teacher_lines(real, real_rows, rows['teachers'],
                                    results['teachers'], best_name, best)
    lines += ['', "![Test mAP against the teacher's mAP](teacher_quality.png)",
              '']
    with open(osp.join(out_dir, 'teacher_quality.md'), 'w') as f:
        f.write('\n'.join(lines))
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    # teachers C0, C1; the methods without a teacher dashed, C2 onwards
    for i, (m, v) in enumerate(baselines.items()):
        ax.axhline(v['mean'], ls='--', lw=1, color=f'C{i + 2}',
                   label=f'{NAMES[m]} (no teacher)')
    for i, (m, by_level) in enumerate(rows['teachers'].items()):
        pts = sorted((v['teacher_mAP'], v['mean'], v['std'])
                     for v in by_level.values())
        x, y, e = map(np.array, zip(*pts))
        ax.errorbar(x, y, yerr=e, marker='o', capsize=3, color=f'C{i}',
                    label=NAMES[m])
        if m in real_rows:
            ax.errorbar(real['mAP'], real_rows[m]['mean'],
                        yerr=real_rows[m]['std'], marker='*', ms=12,
                        capsize=3, color=f'C{i}', ls='none',
                        label=f'{NAMES[m]}, real teacher')
    ax.set_xlabel("teacher's mAP on the training images (%)")
    ax.set_ylabel('test mAP (%)')
    ax.set_title('VOC-like proxy, linear regime')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(osp.join(out_dir, 'teacher_quality.png'), dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--levels', nargs='+', type=float,
                        default=list(LEVELS), help='teacher noise levels')
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    parser.add_argument('--methods', nargs='+',
                        choices=[*BASELINES, *TEACHER_METHODS],
                        default=[*BASELINES, *TEACHER_METHODS])
    parser.add_argument('--fraction', type=float, default=0.2,
                        help="the proxy's size, a share of the suite's")
    parser.add_argument('--out', default='work_dirs/teacher_quality',
                        help='folder of the json, md and png')
    parser.add_argument('--work-root', default='work_dirs/teacher_quality')
    parser.add_argument('--write-teacher', metavar='CONFIG',
                        help='only write a synthetic teacher for CONFIG\'s '
                        'training set (with --noise, --teacher-out, --crops)')
    parser.add_argument('--noise', type=float, default=0.3)
    parser.add_argument('--crops', type=int, default=0)
    parser.add_argument('--teacher-out')
    parser.add_argument('--cfg-options', nargs='+', default=[],
                        metavar='KEY=VALUE',
                        help="--write-teacher: the config's; "
                        "--model-teacher: the teacher's training")
    parser.add_argument('--real-teacher', action='store_true',
                        help='only the real teacher: train it on a second '
                        'proxy instance and VLPL and AEVLP on its scores')
    parser.add_argument('--model-teacher', metavar='RECORD',
                        help='only the fine-tuned real teacher: train it, '
                        'score the training images into --teacher-out, '
                        'record it in this json')
    parser.add_argument('--report-only', action='store_true',
                        help='write the md and png from the json (e.g. while '
                        'a sweep runs) and train nothing')
    args = parser.parse_args()
    if args.write_teacher:
        if not args.teacher_out:
            parser.error('--write-teacher needs --teacher-out')
        teacher_map = write_teacher(args.write_teacher, args.noise,
                                    args.teacher_out, args.crops,
                                    options=args.cfg_options)
        print(f'{args.teacher_out}: noise {args.noise:g}, teacher mAP '
              f'{teacher_map:.2f}')
        return
    if args.model_teacher:
        if not args.teacher_out:
            parser.error('--model-teacher needs --teacher-out')
        prepare_suite(SUITE, 'finetune', args.fraction)
        model_teacher(args.model_teacher, args.fraction, args.work_root,
                      args.teacher_out, args.cfg_options,
                      command_line(sys.argv))
        return
    os.makedirs(args.out, exist_ok=True)
    json_path = osp.join(args.out, 'teacher_quality.json')
    if args.real_teacher:
        if not osp.isfile(json_path):
            write_json(json_path, dict(fraction=args.fraction))
        with open(json_path) as f:
            if json.load(f).get('fraction') != args.fraction:
                parser.error(f'{json_path} holds runs at another --fraction; '
                             'give another --out')
        prepare_suite(SUITE, 'linear', args.fraction)
        results = real_teacher(
            json_path, osp.join(args.work_root, f'f{args.fraction:g}'),
            args.fraction, args.seeds, command_line(sys.argv))
        if any(results.get(m) for m in BASELINES):
            write_outputs(results, args.out, command_line(
                [a for a in sys.argv if a != '--real-teacher']),
                          args.fraction)
        return
    if args.report_only:
        with open(json_path) as f:
            results = json.load(f)
        # the command of the sweep that writes the json
        write_outputs(results, args.out, command_line(
            [a for a in sys.argv if a != '--report-only']),
                      results['fraction'])
        return
    prepare_suite(SUITE, 'linear', args.fraction)
    data = {c: proxy_options(SUITE, args.fraction, c)
            for c, _ in TEACHER_METHODS.values()}
    results = dict(fraction=args.fraction)
    if osp.isfile(json_path):
        with open(json_path) as f:
            results = json.load(f)
    if results.get('fraction') != args.fraction:
        parser.error(f'{json_path} holds runs at --fraction '
                     f'{results.get("fraction")}; give another --out')
    args.work_root = osp.join(args.work_root, f'f{args.fraction:g}')
    teachers = dict(results.get('teachers', {}))
    for level in args.levels:
        files = teacher_files(args.work_root, level)
        if not all(osp.isfile(p) for p in files.values()):
            for crops, path in files.items():
                config = TEACHER_METHODS['aevlp' if crops else 'vlpl'][0]
                teachers[f'{level:g}'] = write_teacher(
                    config, level, path, crops, options=data[config])
        elif f'{level:g}' not in teachers:
            config = TEACHER_METHODS['vlpl'][0]
            teachers[f'{level:g}'] = write_teacher(config, level, files[0], 0,
                                                   options=data[config])
    results['teachers'] = teachers
    with open(json_path, 'w') as f:
        json.dump(results, f, indent=1)
    todo = []
    for seed in args.seeds:  # seed-major: partial results cover every method
        for method in args.methods:
            if method in BASELINES:
                if str(seed) not in results.get(method, {}):
                    todo.append((method, None, seed))
                continue
            for level in args.levels:
                key = f'{level:g}'
                if str(seed) not in results.get(method, {}).get(key, {}):
                    todo.append((method, level, seed))
    progress = ProgressBar(len(todo))
    for method, level, seed in todo:
        if method in BASELINES:
            config = suite_config(SUITE, method, 'linear')
            work_dir = osp.join(args.work_root, method, f'seed{seed}')
            options = []
        else:
            config, crops = TEACHER_METHODS[method]
            work_dir = osp.join(args.work_root, method, f'noise{level:g}',
                                f'seed{seed}')
            options = [f'model.head.label_bank.score_file='
                       f'{teacher_files(args.work_root, level)[crops]}']
        options += proxy_options(SUITE, args.fraction, config)
        options += select_options(config, 'spml/mAP')
        mAP, seconds = train_and_test(config, work_dir, seed, options)
        with open(json_path) as f:
            results = json.load(f)
        entry = results.setdefault(method, {})
        if level is not None:
            entry = entry.setdefault(f'{level:g}', {})
        entry[str(seed)] = dict(mAP=mAP, seconds=seconds)
        write_json(json_path, results)
        progress.update()
    print()
    if any(results.get(m) for m in BASELINES) and any(
            results.get(m) for m in TEACHER_METHODS):
        write_outputs(results, args.out, command_line(sys.argv),
                      args.fraction)


if __name__ == '__main__':
    main()
