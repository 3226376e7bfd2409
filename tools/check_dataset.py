"""Check every split of a config's dataset and print every problem found.

    python tools/check_dataset.py configs/grloss/resnet50_voc.py [--decode]

Builds the train, val and test datasets as training would (which validates
the labels: values, the one-positive rule, observed against full labels,
annotation types), compares their class counts with each other and with
``model.head.num_classes``, checks the training label indices as an SPML
head reads them and EPR's or ROLE's ``expected_positives`` against the
classes (as ``SPMLDatasetCheckHook`` does before training: in range, a
positive per sample, no class both positive and negative), looks for images
listed twice in a split (with different labels: a problem; with the same: a
warning) and images in more than one split (a training image in val or
test: a problem; val and test: a warning), names the classes without a
positive in the training split (a warning), reads the teacher score file of
a teacher label bank (VLPL, AEVLP: ``model.head.label_bank.score_file``)
as training would (missing, another class list, images it lacks or that
changed since it was written, no crop scores for DAMP), and checks every
image file once (missing, unreadable, empty; with ``--decode`` also
undecodable).
Prints what each layout's reader found (counts; for ImageNet the ReaL rows
matched to local images and those left out), then one line per problem
and per warning with file and row, and exits with status 1 if there is any
problem.
"""
import argparse
import sys

from mmengine.config import Config
from mmengine.registry import init_default_scope

from spml_mm.datasets.validation import (DatasetError,
                                         classes_without_positive,
                                         duplicate_findings,
                                         expected_positives_problem,
                                         image_problems, index_label_problems,
                                         shared_image_findings)
from spml_mm.utils import add_cfg_options

SPLITS = ('train', 'val', 'test')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument(
        '--decode',
        action='store_true',
        help='decode every image (slow on large datasets)')
    add_cfg_options(parser, 'train_dataloader.dataset.data_root=data/voc')
    return parser.parse_args(argv)


def build_dataset(cfg, split):
    """The split's dataset without its pipeline (or None), its image paths
    and the problems found in its annotations."""
    from mmpretrain.registry import DATASETS
    dataset_cfg = cfg[f'{split}_dataloader']['dataset'].copy()
    dataset_cfg['pipeline'] = []
    try:
        dataset = DATASETS.build(dataset_cfg)
    except DatasetError as err:
        return None, err.image_paths or [], err.problems
    except (OSError, ValueError, TypeError, KeyError) as err:
        return None, [], [f'{split} dataset: {type(err).__name__}: {err}']
    paths = [
        dataset.get_data_info(k).get('img_path') for k in range(len(dataset))
    ]
    return dataset, [p for p in paths if p is not None], []


def infos_of(dataset):
    """The samples' data infos of a built dataset."""
    return [dataset.get_data_info(k) for k in range(len(dataset))]


def head_label_findings(cfg, dataset, infos):
    """The training samples' label problems as the config's head reads
    them, and the warning for classes without a positive; none for a head
    that is not an SPML head."""
    from mmpretrain.registry import MODELS

    from spml_mm.models.heads import SPMLLinearClsHead
    head = cfg.get('model', {}).get('head', {})
    head_type = MODELS.get(head.get('type', ''))
    if not (isinstance(head_type, type)
            and issubclass(head_type, SPMLLinearClsHead)
            and head.get('num_classes') is not None):
        return [], []
    if not all('gt_label' in info for info in infos):
        return [], []
    where = f'train dataset ({type(dataset).__name__})'
    classes = dataset.metainfo.get('classes')
    return index_label_problems(where, infos, head['num_classes']), [
        classes_without_positive(where, infos, classes) if classes else None
    ]


def teacher_findings(cfg, dataset):
    """The problem with the teacher score file of the config's label bank
    for the training set (as ``SPMLTeacherScoreHook`` reads it), if any."""
    from mmpretrain.registry import MODELS

    from spml_mm.datasets.teacher_scores import (TeacherScoreError,
                                                 load_teacher_table,
                                                 no_crops_error)
    from spml_mm.models.label_banks import DAMPLabelBank
    bank = (cfg.get('model', {}).get('head') or {}).get('label_bank') or {}
    if not bank.get('score_file'):
        return []
    where = 'teacher scores (model.head.label_bank.score_file)'
    try:
        table = load_teacher_table(bank['score_file'], dataset)
        bank_type = MODELS.get(bank.get('type', ''))
        if isinstance(bank_type, type) and issubclass(
                bank_type, DAMPLabelBank) and 'crop_scores' not in table:
            raise no_crops_error(bank['score_file'])
    except (TeacherScoreError, FileNotFoundError) as err:
        return [f'{where}: {err}']
    return []


def unique(lines):
    """``lines`` without repeats, in order: the official train split's
    label problems stop both the train and the val split."""
    return list(dict.fromkeys(line for line in lines if line))


def check(cfg, decode=False, notes=None):
    """Every problem and warning of the config's datasets, one line each,
    and the number of classes of each split built; ``notes`` (a list)
    receives what each layout's reader found (e.g. ImageNet's counts and
    the ReaL rows matched and left out)."""
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    problems, warnings, classes, splits = [], [], {}, {}
    checked = set()
    for split in SPLITS:
        if not cfg.get(f'{split}_dataloader'):
            continue
        dataset, paths, found = build_dataset(cfg, split)
        problems += found + image_problems(f'{split} dataset', paths, decode,
                                           checked)
        if dataset is None:
            continue
        classes[split] = len(dataset.metainfo.get('classes') or ())
        if notes is not None:
            notes += [f'{split} dataset: {note}'
                      for note in getattr(dataset, 'layout_notes', ())]
        splits[split] = infos_of(dataset)
        found, warned = duplicate_findings(
            f'{split} dataset ({type(dataset).__name__})', splits[split])
        problems += found
        warnings += warned
        if split == 'train':
            found, warned = head_label_findings(cfg, dataset, splits[split])
            problems += found + teacher_findings(cfg, dataset)
            warnings += warned
    found, warned = shared_image_findings(splits)
    problems += found
    warnings += warned
    head = cfg.get('model', {}).get('head', {}).get('num_classes')
    k = (cfg.get('model', {}).get('head', {}).get('loss') or {}).get(
        'expected_positives')
    problem = expected_positives_problem(k, head)
    if problem:
        problems.append(problem)
    for split, count in classes.items():
        if head is not None and count != head:
            problems.append(f'{split} dataset: {count} classes but '
                            f'model.head.num_classes={head}')
    if len(set(classes.values())) > 1:
        problems.append(f'the splits disagree on the number of classes: '
                        f'{classes}')
    return unique(problems), unique(warnings), classes


def main(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    notes = []
    problems, warnings, classes = check(cfg, args.decode, notes)
    for line in notes:
        print(line)
    for line in problems:
        print(line)
    for line in warnings:
        print(f'warning: {line}')
    summary = ', '.join(f'{k}: {v} classes' for k, v in classes.items())
    print(f'{len(problems)} problem(s), {len(warnings)} warning(s) '
          f'({summary or "no dataset built"})')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
