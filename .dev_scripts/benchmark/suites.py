"""The method and suite tables: which config each method trains with in
each suite, and the methods each study compares.

The benchmark tools, the analyses and ``.dev_scripts/docs_tables.py`` read
them; the tools that train run the configs (``benchmark.training``).
"""
import os.path as osp

from benchmark.common import REPO

#: method name -> (label in tables, demo config)
METHODS = {
    'an': ('AN', 'configs/an/an_vgg11bn_demo.py'),
    'full': ('full-label BCE (upper bound)',
             'configs/an/an_vgg11bn-full_demo.py'),
    'gr': ('GR', 'configs/grloss/grloss_vgg11bn_demo.py'),
    'em': ('EM', 'configs/em/em_vgg11bn_demo.py'),
    'em_apl': ('EM + APL', 'configs/em_apl/em_apl_vgg11bn_demo.py'),
    'lasd': ('LASD', 'configs/lasd/lasd_vgg11bn_demo.py'),
    'opml': ('OPML', 'configs/opml/opml_vgg11bn_demo.py'),
    'opml_sp': ('OPML-SP', 'configs/opml/opml_vgg11bn-sp_demo.py'),
    'epr': ('EPR', 'configs/epr/epr_vgg11bn_demo.py'),
    'role': ('ROLE', 'configs/role/role_vgg11bn_demo.py'),
    'll_r': ('LL-R', 'configs/ll_r/ll_r_vgg11bn_demo.py'),
    'll_ct': ('LL-Ct', 'configs/ll_ct/ll_ct_vgg11bn_demo.py'),
    'll_cp': ('LL-Cp', 'configs/ll_cp/ll_cp_vgg11bn_demo.py'),
    'partial': ('partial-BCE, 1 positive + 2 negatives (partial labels)',
                'configs/an/an_vgg11bn-partial_demo.py'),
    'vlpl': ('VLPL', 'configs/vlpl/vlpl_vgg11bn_demo.py'),
    'aevlp': ('AEVLP', 'configs/aevlp/aevlp_vgg11bn_demo.py'),
}
#: methods that read a teacher's score file: run only when named
#: (``--methods``), their file in ``--cfg-options
#: model.head.label_bank.score_file=...``; config stems as PROXY_CONFIGS
TEACHER_CONFIGS = {
    'vlpl': 'vlpl/efficientnet-lite0{}_proxy-{}.py',
    'aevlp': 'aevlp/efficientnet-lite0{}_proxy-{}.py',
}
#: proxy suites: method -> config stem under configs/<folder>/, per regime
#: (the papers' methods and the AN and full-label references; the baselines
#: EPR, ROLE and the LL family have demo and ResNet-50 configs only)
PROXY_CONFIGS = {
    'an': 'an/efficientnet-lite0{}_proxy-{}.py',
    'full': 'an/efficientnet-lite0{}-full_proxy-{}.py',
    'gr': 'grloss/efficientnet-lite0{}_proxy-{}.py',
    'em': 'em/efficientnet-lite0{}_proxy-{}.py',
    'em_apl': 'em_apl/efficientnet-lite0{}_proxy-{}.py',
    'lasd': 'lasd/efficientnet-lite0{}_proxy-{}.py',
    'opml': 'opml/efficientnet-lite0{}_proxy-{}.py',
    'opml_sp': 'opml/efficientnet-lite0{}-sp_proxy-{}.py',
}
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
#: model selection without full labels (benchmark.selection): the
#: methods it compares (the seed papers' and AN)
STUDY_METHODS = ['an', 'gr', 'em_apl', 'lasd', 'opml_sp']
#: how good must a teacher be (benchmark.teacher_quality), on the
#: VOC-like proxy: the methods that read the teacher, with their config
#: and score-file kind (the number of crops), and those without a teacher
TEACHER_METHODS = {
    'vlpl': ('configs/vlpl/efficientnet-lite0-linear_proxy-voc.py', 0),
    'aevlp': ('configs/aevlp/efficientnet-lite0-linear_proxy-voc.py', 4),
}
TEACHER_BASELINES = ('an', 'gr', 'em_apl')


def label_of(method: str) -> str:
    """A method's label in the tables."""
    return METHODS[method][0]


def suite_methods(suite):
    """The methods a suite runs by default (not those of a teacher)."""
    return [m for m in (METHODS if suite == 'demo' else PROXY_CONFIGS)
            if m not in TEACHER_CONFIGS]


def suite_config(suite, method, regime='linear'):
    """The config a method trains with in a suite."""
    if suite == 'demo':
        return METHODS[method][1]
    stems = {**PROXY_CONFIGS, **TEACHER_CONFIGS}
    if method not in stems:
        raise ValueError(
            f'{METHODS[method][0]} has no {suite} config; the proxy suites '
            f'run {", ".join(stems)}')
    infix = '-linear' if regime == 'linear' else ''
    return 'configs/' + stems[method].format(infix, suite[6:])


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
