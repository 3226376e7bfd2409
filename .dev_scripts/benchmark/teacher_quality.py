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
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m benchmark.teacher_quality --out docs/results
    # a synthetic teacher's score file for a config's training set
    python -m benchmark.teacher_quality --write-teacher \
        configs/vlpl/vlpl_vgg11bn_demo.py --noise 0.3 \
        --teacher-out data/demo/teacher_scores/synthetic.npz
    # a real teacher trained on another instance of the proxy
    python -m benchmark.teacher_quality --out docs/results \
        --real-teacher
    # the fine-tuned one of the full-size evidence, at the full-label
    # bound's searched rate
    python -m benchmark.teacher_quality --model-teacher teacher.json \
        --fraction 1 --teacher-out data/proxy-voc/teacher_scores/x.npz \
        --cfg-options optim_wrapper.optimizer.lr=0.001
"""
import argparse
import json
import os
import os.path as osp
import sys

from mmengine.utils import ProgressBar

from benchmark.pages.teacher_quality import write_outputs
from benchmark.suites import (LOADERS, TEACHER_BASELINES,
                              TEACHER_METHODS, cache_file_options,
                              feature_cache, label_of, proxy_options,
                              proxy_root, suite_config)
from benchmark.training import (prepare_suite, run, select_options,
                                train_and_test, training_set, write_teacher)
from benchmark.common import REPO, command_line, write_json

#: noise levels of the synthetic teacher, from useless to perfect
LEVELS = (1.0, 0.45, 0.35, 0.28, 0.2, 0.0)
SUITE = 'proxy-voc'
#: generator seed of the proxy instance the real teacher trains on
TEACHER_DATA_SEED = 1
#: the grid of crops a teacher of images scores (AEVLP's on VOC): one score
#: file serves VLPL (whole images) and AEVLP (with crops)
CROP_GRID = 4


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
    side = image_side(fraction)
    if not osp.isfile(osp.join(REPO, root, 'formatted_val_labels_obs.npy')):
        run([sys.executable, 'tools/make_proxy_data.py', '--like', 'voc',
             '--fraction', f'{fraction:g}', '--seed', str(TEACHER_DATA_SEED),
             '--image-size', str(side), '--out-dir', root])
    with open(osp.join(REPO, root, 'statistics.json')) as f:
        made = json.load(f)['arguments']['image_size']
    if made != side:  # the main proxy was made again at another size
        raise RuntimeError(
            f'{root} has {made} px images, the main proxy '
            f'{proxy_root(SUITE, fraction)} {side} px: the teacher would '
            f'train on other images than it scores; delete {root} to make '
            'it again at the main proxy\'s size')
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
            print(f'real teacher, {label_of(method)} seed {seed}: {mAP:.2f}')
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


def make_parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--levels', nargs='+', type=float,
                        default=list(LEVELS), help='teacher noise levels')
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    parser.add_argument('--methods', nargs='+',
                        choices=[*TEACHER_BASELINES, *TEACHER_METHODS],
                        default=[*TEACHER_BASELINES, *TEACHER_METHODS])
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
    return parser


def synthetic_teachers(args, results):
    """The synthetic teacher of every level of ``--levels``, written where
    its files are missing: level -> its mAP on the training images."""
    data = {c: proxy_options(SUITE, args.fraction, c)
            for c, _ in TEACHER_METHODS.values()}
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
    return teachers


def sweep_runs(args, results):
    """The sweep's (method, level, seed) runs not yet in ``results``,
    seed-major (partial results cover every method); level None for a
    method without a teacher."""
    todo = []
    for seed in args.seeds:
        for method in args.methods:
            if method in TEACHER_BASELINES:
                if str(seed) not in results.get(method, {}):
                    todo.append((method, None, seed))
                continue
            for level in args.levels:
                key = f'{level:g}'
                if str(seed) not in results.get(method, {}).get(key, {}):
                    todo.append((method, level, seed))
    return todo


def sweep_run(args, method, level, seed):
    """Train and test one run of the sweep: its test mAP and seconds."""
    if method in TEACHER_BASELINES:
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
    return train_and_test(config, work_dir, seed, options)


def sweep(parser, args, json_path):
    """The synthetic teachers' sweep, resumed from ``json_path``; the page
    once both kinds of method have runs."""
    prepare_suite(SUITE, 'linear', args.fraction)
    results = dict(fraction=args.fraction)
    if osp.isfile(json_path):
        with open(json_path) as f:
            results = json.load(f)
    if results.get('fraction') != args.fraction:
        parser.error(f'{json_path} holds runs at --fraction '
                     f'{results.get("fraction")}; give another --out')
    args.work_root = osp.join(args.work_root, f'f{args.fraction:g}')
    results['teachers'] = synthetic_teachers(args, results)
    with open(json_path, 'w') as f:
        json.dump(results, f, indent=1)
    todo = sweep_runs(args, results)
    progress = ProgressBar(len(todo))
    for method, level, seed in todo:
        mAP, seconds = sweep_run(args, method, level, seed)
        with open(json_path) as f:
            results = json.load(f)
        entry = results.setdefault(method, {})
        if level is not None:
            entry = entry.setdefault(f'{level:g}', {})
        entry[str(seed)] = dict(mAP=mAP, seconds=seconds)
        write_json(json_path, results)
        progress.update()
    print()
    if any(results.get(m) for m in TEACHER_BASELINES) and any(
            results.get(m) for m in TEACHER_METHODS):
        write_outputs(results, args.out, command_line(sys.argv),
                      args.fraction)


def real_teacher_only(parser, args, json_path):
    """``--real-teacher``: its runs join the sweep's json and page."""
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
    if any(results.get(m) for m in TEACHER_BASELINES):
        write_outputs(results, args.out, command_line(
            [a for a in sys.argv if a != '--real-teacher']), args.fraction)


def main():
    parser = make_parser()
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
        real_teacher_only(parser, args, json_path)
    elif args.report_only:
        with open(json_path) as f:
            results = json.load(f)
        # the command of the sweep that writes the json
        write_outputs(results, args.out, command_line(
            [a for a in sys.argv if a != '--report-only']),
                      results['fraction'])
    else:
        sweep(parser, args, json_path)


if __name__ == '__main__':
    main()
