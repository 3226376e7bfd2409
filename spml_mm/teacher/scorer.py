"""Teachers that score images for the classes of a dataset.

A :class:`TeacherScorer` turns a batch of images, as MMPretrain's
``LoadImageFromFile`` reads them (BGR, 0-255) and resized to its
``image_size`` (or, for a teacher of the linear regime, their cached
features, B x D x 1 x 1), into scores (B, C) in [0, 1] for the dataset's
classes:

- :class:`ModelTeacher`: any MMPretrain classifier; the sigmoid of its
  logits for a multi-label head (``MultiLabelClsHead`` and its subclasses),
  the softmax over its classes for a single-label head;
- :class:`CLIPTeacher`: MMPretrain's ``CLIPZeroShot``; the cosine
  similarity of the image to each class's prompt embedding, divided by a
  temperature and turned into a softmax over the classes, as VLPL's and
  AEVLP's releases do.

``tools/score_teacher.py`` runs them over a dataset and writes a teacher
score file (:mod:`spml_mm.datasets.teacher_scores`); a hook that re-scores
during training calls :meth:`TeacherScorer.score` itself.
"""
import inspect
import os.path as osp
import socket
import threading
from typing import Optional, Sequence, Union
from urllib.parse import urlparse
from urllib.request import getproxies

import mmcv
import numpy as np
import torch
import torch.nn.functional as F
from mmengine.config import Config

#: The prompt of AEVLP's release (its ``ctx_init`` + class name + '.').
DEFAULT_PROMPTS = ('a photo of a {}.', )
#: Softmax temperature of CLIP similarities in VLPL's and AEVLP's releases.
DEFAULT_TEMPERATURE = 0.01
MULTIMODAL_HINT = (
    "MMPretrain 1.2's multimodal models (CLIPZeroShot, RAM) need "
    "pip install 'transformers>=4.28,<4.52' 'huggingface_hub<1' pycocotools "
    "(pip install -e '.[teacher]'; transformers 4.52 and later no longer "
    'provide what mmpretrain.models.multimodal imports)')
#: How to give the teacher a tokenizer the Hugging Face Hub cannot serve.
TOKENIZER_HINT = (
    'On a machine that reaches the Hub, save the tokenizer with python -c '
    '"from transformers import AutoTokenizer; '
    "AutoTokenizer.from_pretrained('{name}').save_pretrained('FOLDER')\", "
    'copy FOLDER here and pass --teacher-options '
    'model.tokenizer.name_or_path=FOLDER')
#: Seconds the Hugging Face Hub has to answer before a tokenizer that only
#: it can serve is refused.
HUB_TIMEOUT = 5.

RAM_NOT_YET = (
    '--source ram is not available yet: RAM (MMPretrain RAMNormal) needs '
    "MMPretrain's RAM tag lists, which its package does not ship, and "
    f'{MULTIMODAL_HINT}. Score with --source clip, or save the tagger\'s '
    'scores of the training images and pass them with --source file '
    '(docs/user_guides/teacher_scores.md).')


class TeacherUnavailableError(RuntimeError):
    """A part of the teacher (its tokenizer) cannot be had here."""


def load_teacher_config(path: str) -> Config:
    """A teacher's MMPretrain config: a file, or ``package::path`` in the
    configs of an installed OpenMMLab package (MMPretrain's model zoo, e.g.
    ``mmpretrain::clip/clip_vit-base-p16_zeroshot-cls_in1k.py``)."""
    if '::' in path:
        from mmengine.config.utils import (_get_external_cfg_base_path,
                                           _get_package_and_cfg_path)
        from mmengine.utils import get_installed_path
        package, relative = _get_package_and_cfg_path(path)
        path = _get_external_cfg_base_path(get_installed_path(package),
                                           relative)
    return Config.fromfile(path)


def hub_unreachable(endpoint: str,
                    timeout: float = HUB_TIMEOUT) -> Optional[str]:
    """Why ``endpoint`` takes no connection within ``timeout`` seconds, or
    None (also where a proxy serves it, which is not tried)."""
    url = urlparse(endpoint)
    if url.scheme in getproxies():
        return None
    port = url.port or (443 if url.scheme == 'https' else 80)
    outcome = []

    def connect():
        try:
            socket.create_connection((url.hostname, port), timeout).close()
            outcome.append(None)
        except OSError as err:
            outcome.append(f'{endpoint} cannot be reached ({err})')

    # in a thread: name resolution takes no timeout
    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(timeout)
    return outcome[0] if outcome else \
        f'{endpoint} did not answer within {timeout:g} s'


def check_tokenizer(model_cfg) -> None:
    """Refuse at once a Hugging Face tokenizer that cannot be had: not a
    folder, not in the Hub's cache, and the Hub offline (``HF_HUB_OFFLINE``)
    or unreachable. ``transformers`` would retry for about a minute, then
    fail without naming the remedy."""
    name = (model_cfg.get('tokenizer') or {}).get('name_or_path')
    if not name or osp.isdir(name):
        return
    from huggingface_hub import constants, try_to_load_from_cache
    cached = isinstance(
        try_to_load_from_cache(name, 'tokenizer_config.json'), str)
    if constants.HF_HUB_OFFLINE:
        if cached:
            return
        reason = 'HF_HUB_OFFLINE is set'
    else:
        reason = hub_unreachable(constants.ENDPOINT)
        if reason is None:
            return
    if cached:
        print(f'note: {reason}; transformers reads the cached tokenizer '
              f'{name!r} after its retries (HF_HUB_OFFLINE=1 skips them)')
        return
    raise TeacherUnavailableError(
        f'the tokenizer {name!r} (model.tokenizer.name_or_path of the '
        'teacher config) is not in the Hugging Face cache '
        f'({constants.HF_HUB_CACHE}) and {reason}. ' +
        TOKENIZER_HINT.format(name=name))


def whole_and_crops(image: np.ndarray, image_size: int, grid: int = 0,
                    interpolation: str = 'bilinear') -> np.ndarray:
    """The image and its ``grid x grid`` crops, each resized to
    ``image_size`` squared by Pillow (bilinear: torchvision's ``Resize`` of
    a PIL image, as AEVLP's release resizes CLIP's input): (1 + grid**2, S,
    S, 3).

    The crops are DAMP's (AEVLP's release): an image of W x H pixels is cut
    into tiles of ``W // grid`` x ``H // grid`` pixels, row by row, without
    overlap (the last ``W % grid`` columns and ``H % grid`` rows fall in no
    tile).
    """
    size = (image_size, image_size)
    views = [
        mmcv.imresize(image, size, interpolation=interpolation,
                      backend='pillow')
    ]
    if grid:
        height, width = image.shape[:2]
        tile_h, tile_w = max(height // grid, 1), max(width // grid, 1)
        for y in range(grid):
            for x in range(grid):
                tile = image[y * tile_h:min((y + 1) * tile_h, height),
                             x * tile_w:min((x + 1) * tile_w, width)]
                views.append(
                    mmcv.imresize(tile, size, interpolation=interpolation,
                                  backend='pillow'))
    return np.stack(views)


def check_model_type(model_cfg, source: str) -> None:
    """Refuse a model whose type MMPretrain registered only as a placeholder
    (its optional dependencies are missing)."""
    from mmpretrain.registry import MODELS
    found = MODELS.get(model_cfg['type'])
    if found is None:
        raise ValueError(f'--source {source}: model type '
                         f"{model_cfg['type']!r} is not registered in "
                         'MMPretrain')
    if not inspect.isclass(found):
        raise ImportError(f"--source {source}: {model_cfg['type']} is not "
                          f'available: {MULTIMODAL_HINT}.')


class TeacherScorer:
    """Base of the teachers: a model in eval mode, its data preprocessor, and
    the dataset's classes it scores.

    Args:
        model (BaseModel): The teacher, with its ``data_preprocessor``.
        classes (Sequence[str]): The dataset's classes, in order.
        image_size (int): Side of the square input the teacher is fed.
    """

    def __init__(self, model, classes: Sequence[str], image_size: int):
        self.model = model.eval()
        self.classes = [str(c) for c in classes]
        self.image_size = int(image_size)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def preprocess(self, inputs: torch.Tensor) -> torch.Tensor:
        """Normalise images (B, 3, S, S), BGR 0-255, with the teacher's data
        preprocessor (mean, std, channel order)."""
        data = self.model.data_preprocessor(
            dict(inputs=inputs.to(self.device)), False)
        # MMPretrain's multimodal preprocessor names its output 'images'
        return data['images'] if 'images' in data else data['inputs']

    @torch.no_grad()
    def score(self, inputs: torch.Tensor) -> torch.Tensor:
        """Scores (B, C) in [0, 1] of images (B, 3, S, S), BGR 0-255, with
        S = ``image_size``."""
        raise NotImplementedError

    def meta(self) -> dict:
        """What the scores depend on besides the weights, for the file."""
        return dict(image_size=self.image_size)


class ModelTeacher(TeacherScorer):
    """An MMPretrain classifier as the teacher.

    Its classes are matched to the dataset's by name (``class_names``: the
    checkpoint's ``dataset_meta``); without names it must have the dataset's
    number of classes, taken in the dataset's order.

    Args:
        model (ImageClassifier): The classifier, weights loaded.
        classes (Sequence[str]): The dataset's classes.
        image_size (int): Side of its square input.
        class_names (Sequence[str], optional): The classifier's classes.
    """

    def __init__(self, model, classes: Sequence[str], image_size: int,
                 class_names: Optional[Sequence[str]] = None):
        from mmpretrain.models.heads import ClsHead, MultiLabelClsHead
        super().__init__(model, classes, image_size)
        head = getattr(model, 'head', None)
        if isinstance(head, MultiLabelClsHead):
            self.activation = 'sigmoid'
        elif isinstance(head, ClsHead):
            self.activation = 'softmax'
        else:
            raise TypeError(
                f'--source model needs a classifier with an MMPretrain '
                f'ClsHead or MultiLabelClsHead, got head '
                f'{type(head).__name__}')
        num_outputs = head.num_classes
        if class_names is None:
            if num_outputs != len(self.classes):
                raise ValueError(
                    f'the teacher has {num_outputs} classes and no class '
                    f'names in its checkpoint (dataset_meta), the dataset '
                    f'{len(self.classes)}; it cannot be matched')
            class_names = self.classes
            self.class_names_from = 'dataset order (no names in checkpoint)'
        else:
            self.class_names_from = 'checkpoint dataset_meta'
        class_names = [str(c) for c in class_names]
        missing = [c for c in self.classes if c not in class_names]
        if missing:
            raise ValueError(
                f'the teacher does not score {len(missing)} of the dataset\'s '
                f'classes: {missing[:10]} (it knows {class_names[:10]}...)')
        self.columns = torch.tensor([class_names.index(c)
                                     for c in self.classes])

    @torch.no_grad()
    def score(self, inputs: torch.Tensor) -> torch.Tensor:
        logits = self.model(self.preprocess(inputs), mode='tensor')
        if isinstance(logits, (tuple, list)):
            logits = logits[-1]
        logits = logits.float()
        probs = logits.sigmoid() if self.activation == 'sigmoid' else \
            logits.softmax(-1)
        return probs[:, self.columns.to(probs.device)]

    def meta(self) -> dict:
        return dict(super().meta(), activation=self.activation,
                    class_names_from=self.class_names_from)


class CLIPTeacher(TeacherScorer):
    """MMPretrain's ``CLIPZeroShot`` as the teacher.

    Each class c is embedded as the normalised mean of the normalised text
    embeddings of its prompts (the prompt templates with the class name,
    ``_`` read as a space), as ``CLIPZeroShot.prepare_text_prototype`` does.
    The score of image x for class c is

        softmax_c( cos(f(x), t_c) / temperature )

    over the dataset's classes: VLPL's and AEVLP's releases both turn CLIP's
    similarities into scores this way (temperature 0.01 for VOC, COCO and
    NUS-WIDE, 0.1 for AEVLP's CUB), and their thresholds are calibrated on
    it. The scores of an image sum to 1, so a multi-label image shares its
    mass between its classes.

    Args:
        model (CLIPZeroShot): The CLIP model, weights loaded.
        classes (Sequence[str]): The dataset's classes.
        image_size (int): Side of its square input. Defaults to 224.
        prompts (Sequence[str]): Prompt templates with ``{}`` for the class
            name. Defaults to ``('a photo of a {}.', )`` (AEVLP's release).
        temperature (float): The softmax temperature T. Defaults to 0.01.
    """

    def __init__(self,
                 model,
                 classes: Sequence[str],
                 image_size: int = 224,
                 prompts: Sequence[str] = DEFAULT_PROMPTS,
                 temperature: float = DEFAULT_TEMPERATURE):
        super().__init__(model, classes, image_size)
        prompts = list(prompts)
        bad = [p for p in prompts if p.count('{}') != 1]
        if not prompts or bad:
            raise ValueError(f'each prompt needs one {{}} for the class name, '
                             f'got {prompts!r}')
        if not temperature > 0:
            raise ValueError(f'temperature must be > 0, got {temperature}')
        self.prompts = prompts
        self.temperature = float(temperature)
        self.text_embeds = self._class_embeddings()

    @torch.no_grad()
    def _class_embeddings(self) -> torch.Tensor:
        """(C, D) normalised class embeddings."""
        embeds = []
        for name in self.classes:
            texts = [p.format(name.replace('_', ' ')) for p in self.prompts]
            tokens = self.model.tokenize(texts).to(self.device)
            features = F.normalize(
                self.model.extract_text_feat(tokens).float(), dim=-1)
            embeds.append(F.normalize(features.mean(0), dim=-1))
        return torch.stack(embeds)

    @torch.no_grad()
    def score(self, inputs: torch.Tensor) -> torch.Tensor:
        features = self.model.extract_image_feat(self.preprocess(inputs))
        similarity = F.normalize(features.float(), dim=-1) @ \
            self.text_embeds.t()
        return (similarity / self.temperature).softmax(-1)

    def meta(self) -> dict:
        return dict(
            super().meta(),
            prompts=self.prompts,
            temperature=self.temperature,
            activation='softmax over classes of cosine / temperature')


def build_teacher(source: str,
                  config: Union[str, Config],
                  checkpoint: str,
                  classes: Sequence[str],
                  image_size: int,
                  prompts: Sequence[str] = DEFAULT_PROMPTS,
                  temperature: float = DEFAULT_TEMPERATURE,
                  device: str = 'cpu') -> TeacherScorer:
    """A teacher from an MMPretrain config and checkpoint.

    Args:
        source (str): ``'model'`` or ``'clip'``.
        config (str | Config): The teacher's MMPretrain config (a file or
            ``package::path``, see :func:`load_teacher_config`).
        checkpoint (str): Its weights.
        classes (Sequence[str]): The dataset's classes.
        image_size (int): Side of the square input.
        prompts, temperature: Of :class:`CLIPTeacher`.
        device (str): Where the teacher runs.
    """
    from mmengine.registry import init_default_scope
    from mmengine.runner import load_checkpoint
    from mmpretrain.registry import MODELS

    if source == 'ram':
        raise NotImplementedError(RAM_NOT_YET)
    cfg = load_teacher_config(config) if isinstance(config, str) else config
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model_cfg = cfg.model.copy()
    check_model_type(model_cfg, source)
    if source == 'clip' and model_cfg['type'] != 'CLIPZeroShot':
        raise ValueError(f'--source clip needs a CLIPZeroShot config, '
                         f"{cfg.filename} builds {model_cfg['type']}")
    if source == 'model' and cfg.get('data_preprocessor') is not None:
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    if not osp.isfile(checkpoint):
        raise FileNotFoundError(f'checkpoint {checkpoint} not found')
    check_tokenizer(model_cfg)
    try:
        model = MODELS.build(model_cfg)
    except OSError as err:  # transformers' tokenizer cannot be fetched
        name = (model_cfg.get('tokenizer') or {}).get('name_or_path')
        if not name:
            raise
        raise TeacherUnavailableError(
            f'{err} ' + TOKENIZER_HINT.format(name=name)) from None
    # missing or unexpected keys are logged
    loaded = load_checkpoint(model, checkpoint, map_location='cpu',
                             logger='current')
    names = (loaded.get('meta') or {}).get('dataset_meta', {}).get('classes')
    model.to(device)
    if source == 'clip':
        return CLIPTeacher(model, classes, image_size, prompts, temperature)
    if source == 'model':
        return ModelTeacher(model, classes, image_size, names)
    raise ValueError(f'unknown teacher source {source!r}')

