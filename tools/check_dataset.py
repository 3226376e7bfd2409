"""Check every split of a config's dataset and print every problem found.

    python tools/check_dataset.py configs/grloss/resnet50_voc.py [--decode]

Builds the train, val and test datasets as training would (which validates
the labels: values, the one-positive rule, observed against full labels,
annotation types), compares their class counts with each other and with
``model.head.num_classes``, checks the training label indices as an SPML
head reads them and EPR's or ROLE's ``expected_positives`` against the
classes (as ``SPMLDatasetCheckHook`` does before training: in range, a
positive per sample, no class both positive and negative), and
checks every image file (missing,
unreadable, empty; with ``--decode`` also undecodable). Prints one line per
problem with file and row, and exits with status 1 if there is any.
"""
import argparse
import sys

from mmengine.config import Config
from mmengine.registry import init_default_scope

from spml_mm.datasets.validation import (DatasetError,
                                         expected_positives_problem,
                                         image_problems, index_label_problems)
from spml_mm.utils import ConfigOptionsAction

SPLITS = ('train', 'val', 'test')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help='config file path')
    parser.add_argument(
        '--decode',
        action='store_true',
        help='decode every image (slow on large datasets)')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=ConfigOptionsAction,
        help='override config entries, e.g. '
        'train_dataloader.dataset.data_root=data/voc')
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


def head_label_problems(cfg, dataset):
    """The training samples' label problems as the config's head reads
    them; none for a head that is not an SPML head."""
    from mmpretrain.registry import MODELS

    from spml_mm.models.heads import SPMLLinearClsHead
    head = cfg.get('model', {}).get('head', {})
    head_type = MODELS.get(head.get('type', ''))
    if not (isinstance(head_type, type)
            and issubclass(head_type, SPMLLinearClsHead)
            and head.get('num_classes') is not None):
        return []
    infos = [dataset.get_data_info(k) for k in range(len(dataset))]
    if not all('gt_label' in info for info in infos):
        return []
    return index_label_problems(
        f'train dataset ({type(dataset).__name__})', infos,
        head['num_classes'])


def check(cfg, decode=False):
    """Every problem of the config's datasets, one line each."""
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    problems, classes = [], {}
    for split in SPLITS:
        if not cfg.get(f'{split}_dataloader'):
            continue
        dataset, paths, found = build_dataset(cfg, split)
        problems += found + image_problems(f'{split} dataset', paths, decode)
        if dataset is not None:
            classes[split] = len(dataset.metainfo.get('classes') or ())
        if split == 'train' and dataset is not None:
            problems += head_label_problems(cfg, dataset)
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
    return problems, classes


def main(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    problems, classes = check(cfg, args.decode)
    for line in problems:
        print(line)
    summary = ', '.join(f'{k}: {v} classes' for k, v in classes.items())
    print(f'{len(problems)} problem(s) ({summary or "no dataset built"})')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
