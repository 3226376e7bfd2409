"""The method cards: what the project knows of each method, read from the
model index (``model-index.yml`` and ``configs/<key>/metafile.yml``).

Each metafile is in OpenMMLab's model-index format; its collection's
``Metadata.Method`` is the method's card (key, label, kind, loss, label
bank, hooks, page, procedure and configs per suite, and variants: further
rows of the tables that the folder's configs give, such as the full-label
bound). MMPretrain's :class:`~mmpretrain.apis.ModelHub` reads the same
files, so ``mmpretrain.list_models()`` and ``mmpretrain.get_model()`` know
the plugin's models once :func:`register_models` has run (``import
spml_mm`` runs it).
"""
import fnmatch
import os.path as osp
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Tuple, Union

#: kinds of rows, in the order the tables group them
KINDS = ('reference', 'baseline', 'ablation', 'seed', 'teacher')


@dataclass(frozen=True)
class Method:
    """One method's card, or one of its variants.

    Attributes:
        key (str): The only spelling of the method: its config folder for a
            method, its own name for a variant (``full``, ``opml_sp``).
        label (str): Its name in tables and pages.
        kind (str): One of :data:`KINDS`.
        loss (str): The registered loss its configs use.
        label_bank (str | None): The registered label bank, if any.
        hooks (tuple): Registered hooks its configs add to every method's.
        loss_time_target (tuple): The most its loss may take, as a ratio to
            MMPretrain's sigmoid BCE, at each shape of the speed page's loss
            table; empty where none is set.
        configs (dict): ``demo``, ``voc``, ``coco``, ``nuswide``, ``cub``
            -> config; ``proxy-voc`` and ``proxy-coco`` -> ``{'linear':
            config, 'finetune': config}``. Paths from the repository root.
        folder (str): ``configs/<folder>``, the card's home.
        collection (str): The model index's collection name.
        page (str): Its docs page (a variant: its method's).
        procedure (dict): What the release does: ``Head LR``
            (the head's learning-rate multiplier, ``x1`` or ``x10``),
            ``Stopping`` (``none``, ``no new best``, ``drop > d``) and
            ``Source``; every config of the method but the demo's (which
            trains from scratch at one rate) follows it.
        variant_of (str | None): The method a variant belongs to.
        paper (dict): ``Title`` and ``URL`` of the collection's paper.
        models (tuple): The model index's model names of its folder.
    """
    key: str
    label: str
    kind: str
    loss: str
    label_bank: Optional[str]
    hooks: Tuple[str, ...]
    loss_time_target: Tuple[float, ...]
    configs: Dict[str, Union[str, Dict[str, str]]]
    folder: str
    collection: str
    page: str
    procedure: Dict[str, str]
    variant_of: Optional[str] = None
    paper: Dict[str, str] = field(default_factory=dict)
    models: Tuple[str, ...] = ()

    def config(self, suite: str, regime: str = 'finetune') -> str:
        """The config the method trains with in ``suite`` (``demo``, a
        dataset, or ``proxy-voc``/``proxy-coco`` in ``regime``)."""
        found = self.configs.get(suite)
        if isinstance(found, dict):
            found = found.get(regime)
        if found is None:
            has = ', '.join(
                f'{s} ({"/".join(c)})' if isinstance(c, dict) else s
                for s, c in self.configs.items())
            which = f'{suite} ({regime})' if suite.startswith('proxy') \
                else suite
            raise ValueError(
                f'{self.label} has no {which} config; its card '
                f'(configs/{self.folder}/metafile.yml) has: {has}')
        return found


def index_root() -> str:
    """The folder holding ``model-index.yml`` and ``configs/``: the
    package's ``.mim`` (installs), else the checkout."""
    package = osp.dirname(osp.dirname(osp.abspath(__file__)))  # spml_mm
    mim = osp.join(package, '.mim')
    if osp.isfile(osp.join(mim, 'model-index.yml')):
        return mim
    return osp.dirname(package)


@lru_cache(maxsize=None)
def _model_index():
    from modelindex.load_model_index import load
    index = load(osp.join(index_root(), 'model-index.yml'))
    index.build_models_with_collections()
    return index


def _card(card: dict, folder: str, collection, models, parent=None):
    """A :class:`Method` of a card's fields (a variant: its own, else its
    method's page and procedure)."""
    return Method(
        key=card['Key'],
        label=str(card['Label']),
        kind=card['Kind'],
        loss=card['Loss'],
        label_bank=card.get('Label Bank'),
        hooks=tuple(card.get('Hooks') or ()),
        loss_time_target=tuple(card.get('Loss Time Target') or ()),
        configs=dict(card['Configs']),
        folder=folder,
        collection=collection.name,
        page=card.get('Page') or parent.page,
        procedure=dict(card.get('Procedure') or parent.procedure),
        variant_of=parent and parent.key,
        paper=dict(collection.paper) if isinstance(collection.paper,
                                                   dict) else {},
        models=models)


@lru_cache(maxsize=None)
def _cards() -> Dict[str, Method]:
    index = _model_index()
    cards = {}
    for collection in index.collections:
        card = collection.metadata.data.get('Method')
        if card is None:
            continue
        folder = osp.basename(osp.dirname(collection.filepath))
        models = tuple(m.name for m in index.models
                       if m.in_collection == collection.name)
        method = _card(card, folder, collection, models)
        if method.key != folder:
            raise ValueError(
                f'configs/{folder}/metafile.yml: the card\'s Key is '
                f'{method.key!r}; a method\'s key is its folder, {folder!r}')
        cards[method.key] = method
        for variant in card.get('Variants') or ():
            row = _card(variant, folder, collection, models, parent=method)
            cards[row.key] = row
    return cards


def list_methods(pattern: Optional[str] = None,
                 kind: Optional[str] = None,
                 variants: bool = False,
                 suite: Optional[str] = None) -> List[str]:
    """The keys of the plugin's methods, in the model index's order.

    Args:
        pattern (str, optional): A wildcard pattern of keys (``'ll_*'``).
        kind (str, optional): Only rows of this kind (:data:`KINDS`).
        variants (bool): Also the variants (the full-label bound,
            OPML-SP, ...), each after its method. Defaults to False: one
            key per ``configs/<key>/`` folder.
        suite (str, optional): Only rows with a config for this suite
            (``demo``, ``proxy-voc``, ``coco``, ...).

    Examples:
        >>> from spml_mm.apis import list_methods
        >>> list_methods('ll_*')
        ['ll_r', 'll_ct', 'll_cp']
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f'kind must be one of {KINDS}, not {kind!r}')
    return [
        key for key, method in _cards().items()
        if (variants or method.variant_of is None) and (
            kind is None or method.kind == kind) and (
                pattern is None or fnmatch.fnmatch(key, pattern)) and (
                    suite is None or suite in method.configs)
    ]


def get_method(key: str) -> Method:
    """The card of a method or variant by its key (:func:`list_methods`).

    Examples:
        >>> from spml_mm.apis import get_method
        >>> get_method('grloss').loss
        'GRLoss'
    """
    cards = _cards()
    if key not in cards:
        close = fnmatch.filter(cards, f'*{key[:2]}*') if key else []
        raise KeyError(
            f'no method {key!r}; the methods are '
            f'{", ".join(cards)}'
            f'{f" (did you mean {close[0]!r}?)" if close else ""}')
    return cards[key]


def register_models() -> None:
    """Register the plugin's model index with MMPretrain's ``ModelHub``, so
    that ``mmpretrain.list_models('*_demo')`` lists the plugin's models and
    ``mmpretrain.get_model(name)`` builds one (untrained: no weights are
    published). Once per process."""
    from mmpretrain.apis import ModelHub
    if not ModelHub.has('an_vgg11bn_demo'):
        ModelHub.register_model_index(
            osp.join(index_root(), 'model-index.yml'),
            config_prefix=index_root())
