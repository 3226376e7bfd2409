"""The method and suite tables: which config each method trains with in
each suite, and the methods each study compares.

The benchmark tools, the analyses and ``.dev_scripts/docs_tables.py`` read
them; the tools that train run the configs (``benchmark.training``).
"""
import os.path as osp

from spml_mm.apis import get_method, list_methods

from benchmark.common import REPO

#: every row of the tables (methods and their variants), in the cards' order
METHODS = list_methods(variants=True)
#: the rows that read a teacher's score file: run only when named
#: (``--methods``), their file in ``--cfg-options
#: model.head.label_bank.score_file=...``
TEACHER_CONFIGS = list_methods(kind='teacher', suite='proxy-voc')
#: the rows of the proxy suites (the papers' methods and the AN and
#: full-label references; the baselines EPR, ROLE and the LL family have
#: demo and ResNet-50 configs only)
PROXY_CONFIGS = [m for m in list_methods(variants=True, suite='proxy-voc')
                 if m not in TEACHER_CONFIGS]
#: proxy suites: data generation arguments (COCO-like at a tenth of COCO)
PROXY_DATA = {
    'proxy-voc': ['--like', 'voc'],
    'proxy-coco': ['--like', 'coco', '--fraction', '0.1'],
}
LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')
SUITE_TITLES = {
    'demo': 'Demo dataset',
    'proxy-voc': 'VOC-like proxy',
    'proxy-coco': 'COCO-like proxy (a tenth of COCO\'s split sizes)',
}
#: model selection without full labels (benchmark.selection): the methods
#: it compares (AN and the seed papers' recipes)
STUDY_METHODS = ['an', *list_methods(kind='seed', variants=True)]
#: how good must a teacher be (benchmark.teacher_quality), on the VOC-like
#: proxy: the methods that read the teacher, with their config and
#: score-file kind (the number of crops: AEVLP's release scores 4 crops),
#: and those without a teacher
TEACHER_METHODS = {
    m: (get_method(m).config('proxy-voc', 'linear'), 4 if m == 'aevlp' else 0)
    for m in TEACHER_CONFIGS
}
TEACHER_BASELINES = ('an', 'grloss', 'em_apl')


def label_of(method: str) -> str:
    """A method's label in the tables."""
    return get_method(method).label


def suite_methods(suite, regime=None):
    """The methods a suite runs by default (not those of a teacher): those
    whose card has a config for it (in ``regime``, for a proxy suite)."""
    found = []
    for m in list_methods(variants=True, suite=suite):
        configs = get_method(m).configs[suite]
        if get_method(m).kind != 'teacher' and (
                regime is None or not isinstance(configs, dict)
                or regime in configs):
            found.append(m)
    return found


def suite_config(suite, method, regime='linear'):
    """The config a method trains with in a suite."""
    return get_method(method).config(suite, regime)


def proxy_root(suite, fraction=1.):
    """Data folder of a proxy suite, at ``fraction`` of its default size."""
    return f'data/{suite}' if fraction == 1 else f'data/{suite}-f{fraction:g}'


def proxy_options(suite, fraction=1., config=None):
    """``--cfg-options`` that point a proxy config at a reduced proxy (and,
    for a linear-regime ``config``, at that proxy's feature cache)."""
    if suite == 'demo' or fraction == 1:
        return []
    options = [f'{loader}.dataset.data_root={proxy_root(suite, fraction)}'
               for loader in LOADERS]
    if config is not None and '-linear' in config:
        options += cache_file_options(config,
                                      feature_cache(suite, fraction))
    return options


def feature_cache(suite, fraction=1.):
    """The feature cache of a proxy suite: the configs' file, or the same
    name under a reduced proxy's folder."""
    from mmengine.config import Config
    default = Config.fromfile(
        osp.join(REPO, suite_config(suite, 'an', 'finetune'))).feature_cache
    if fraction == 1:
        return default
    return osp.join(proxy_root(suite, fraction), 'features',
                    osp.basename(default))


def cache_file_options(config, cache):
    """``--cfg-options`` setting every ``cache_file`` of a config's data
    loaders (``LoadCachedFeatures``, at any depth of the pipelines)."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, config)).to_dict()
    options = []

    def visit(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(
            node) if isinstance(node, (list, tuple)) else ()
        for key, value in items:
            if key == 'cache_file':
                options.append(f'{path}cache_file={cache}')
            else:
                visit(value, f'{path}{key}.')

    for loader in LOADERS:
        visit(cfg[loader], f'{loader}.')
    return options


def run_name(suite, regime, fraction):
    """The folder of a suite's kept scores, as the accuracy pages name it."""
    if suite == 'demo':
        return 'demo'
    return f'{suite}_{regime}' + ('' if fraction == 1 else f'-f{fraction:g}')
