"""Generated benchmarks whose label statistics match PASCAL VOC and MS-COCO.

A proxy image is a scene of glyphs: characters rendered with Pillow's
built-in scalable font and scikit-learn's bundled handwritten digits, at
varied scale, position, rotation, stroke and contrast, over a textured
background, partly occluded, among distractor glyphs that belong to no class.
Its labels are the glyph classes it shows.

The label sets follow the real dataset's statistics (:data:`PROXY_TARGETS`):
the number of classes, the average number of positives per image, class
frequencies from the most frequent to the rarest class (a smooth decay on a
log scale between the two), and groups of classes that tend to occur
together. Label sets are drawn from a Gaussian copula with one shared factor
per class group, calibrated so that its marginals given at least one positive
match the targets, and then admitted against per-class quotas, so that every
split meets the targets closely at any size.

The output is the interchange format of the real datasets
(``formatted_{train,val}_{images,labels,labels_obs}.npy``, ``classes.txt``,
images under ``images/``), with the observed labels of
:func:`~spml_mm.datasets.protocol.observe_uniform`, as
``tools/prepare_spml.py`` writes them for VOC and COCO, and each label's
object area in pixels (``formatted_{train,val}_salience.npy``, N x C, 0 for
an absent class), which the datasets' ``observe='largest'`` reads. The areas
are measured as the objects are drawn, consuming no random number: the
images, labels and observations are those the generator wrote without them.
"""
import json
import os
import os.path as osp
from functools import lru_cache
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from mmengine.utils import ProgressBar
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from scipy.special import ndtri

from spml_mm.datasets.protocol import observe_uniform, split_train_val

#: Published statistics of the real datasets: classes and average positives
#: per training image (the papers' numbers, docs/methods/protocol.md).
PUBLISHED_STATISTICS = {
    'VOC 2012': (20, 1.46),
    'MS-COCO 2014': (80, 2.94),
    'NUS-WIDE': (81, 1.89),
    'CUB-200-2011': (312, 31.4),
}


class ProxyTargets(NamedTuple):
    """Label statistics and split sizes a proxy reproduces.

    Attributes:
        num_classes (int): Number of classes C.
        avg_positives (float): Average positives per image.
        max_frequency (float): Share of images holding the most frequent
            class.
        min_frequency (float): Share of images holding the rarest class.
        group_size (int): Classes per co-occurrence group.
        num_train (int): Images of the official train split (train + val of
            the protocol).
        num_test (int): Images of the official val split (the test set).
    """
    num_classes: int
    avg_positives: float
    max_frequency: float
    min_frequency: float
    group_size: int
    num_train: int
    num_test: int


#: VOC 2012: 5,717 + 5,823 images, 20 classes, 1.46 positives per image,
#: the most frequent class (person) in about 40% of the images and the rarest
#: in 2-3%. COCO 2014: 82,081 + 40,137 images, 80 classes, 2.94 positives,
#: from about 45% (person) down to under 1%.
PROXY_TARGETS = {
    'voc': ProxyTargets(20, 1.46, 0.40, 0.025, 4, 5717, 5823),
    'coco': ProxyTargets(80, 2.94, 0.45, 0.008, 8, 82081, 40137),
}

#: Glyphs of the classes. ``font:X`` is character X in Pillow's default
#: font, ``hand:D`` a handwritten digit D from scikit-learn's bundle.
_VOC_GLYPHS = [f'font:{c}' for c in 'ABEGHKMRWY'] + \
    [f'hand:{d}' for d in range(10)]
_COCO_GLYPHS = ([f'font:{c}' for c in 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'] +
                [f'font:{c}' for c in 'abdefghijkmnqrtuy'] +
                [f'font:{c}' for c in '0123456789'] +
                [f'hand:{d}' for d in range(10)] +
                [f'font:{c}' for c in '#$%&@?+=<>*!{}~[]'])
CLASS_GLYPHS = {'voc': _VOC_GLYPHS, 'coco': _COCO_GLYPHS}

#: Pattern families of the texture classes. A texture class is a family in
#: one colour: VOC-like 10 families x 2 colours, COCO-like 10 x 8.
TEXTURE_FAMILIES = ('stripes', 'checker', 'dots', 'rings', 'grid', 'waves',
                    'hatch', 'pinwheel', 'bricks', 'speckle')
#: Foreground colours of the texture classes (RGB in [0, 1]); the pattern's
#: other colour is a dark shade of the same hue.
TEXTURE_COLORS = {
    'red': (0.90, 0.12, 0.10), 'cyan': (0.10, 0.80, 0.85),
    'yellow': (0.95, 0.88, 0.10), 'blue': (0.15, 0.30, 0.95),
    'green': (0.12, 0.75, 0.20), 'purple': (0.62, 0.20, 0.85),
    'orange': (1.00, 0.55, 0.05), 'white': (0.93, 0.93, 0.93)}
_TEXTURE_COLOR_COUNT = {'voc': 2, 'coco': 8}
CLASS_TEXTURES = {
    like: [f'texture:{family}:{color}'
           for color in list(TEXTURE_COLORS)[:count]
           for family in TEXTURE_FAMILIES]
    for like, count in _TEXTURE_COLOR_COUNT.items()}
#: Class sets of a proxy: ``'textures'`` (the default: ImageNet features
#: tell them apart) or ``'glyphs'`` (characters and handwritten digits).
CLASS_SETS = {'textures': CLASS_TEXTURES, 'glyphs': CLASS_GLYPHS}
#: Glyphs drawn as distractors: they belong to no class of the proxy.
DISTRACTOR_GLYPHS = {
    'voc': [f'font:{c}' for c in 'CDFNPSTUVXZ'],
    'coco': [f'font:{c}' for c in '()/\\|^;:"'] + ['shape:ellipse'] * 3 +
    ['shape:polygon'] * 3,
}

_NAMES = {'#': 'hash', '$': 'dollar', '%': 'percent', '&': 'ampersand',
          '@': 'at', '?': 'question', '+': 'plus', '=': 'equals',
          '<': 'less', '>': 'greater', '*': 'star', '!': 'exclamation',
          '{': 'lbrace', '}': 'rbrace', '~': 'tilde', '[': 'lbracket',
          ']': 'rbracket'}


def class_name(glyph: str) -> str:
    """A file-system-safe class name for a glyph (``upper_A``, ``hand_3``).
    """
    kind, char = glyph.split(':', 1)
    if kind == 'texture':
        family, color = char.split(':')
        return f'{family}_{color}'
    if kind == 'hand':
        return f'hand_{char}'
    if char.isdigit():
        return f'digit_{char}'
    if char.isalpha():
        return f'{"upper" if char.isupper() else "lower"}_{char}'
    return f'symbol_{_NAMES[char]}'


def class_frequencies(targets: ProxyTargets) -> np.ndarray:
    """Target share of images per class, most frequent first.

    ``log f_c`` falls from ``log max_frequency`` to ``log min_frequency``
    along ``t_c ** gamma`` (``t_c`` from 0 to 1 over the classes), with the
    exponent ``gamma`` found by bisection so that the frequencies sum to
    ``avg_positives``.
    """
    t = np.linspace(0., 1., targets.num_classes)
    log_hi, log_lo = np.log(targets.max_frequency), np.log(
        targets.min_frequency)

    def total(gamma):
        return np.exp(log_hi + (log_lo - log_hi) * t**gamma).sum()

    lo, hi = 1e-3, 1e3
    if not total(lo) <= targets.avg_positives <= total(hi):
        raise ValueError('no class frequencies between '
                         f'{targets.min_frequency} and '
                         f'{targets.max_frequency} sum to '
                         f'{targets.avg_positives}')
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if total(mid) < targets.avg_positives else (lo,
                                                                        mid)
    return np.exp(log_hi + (log_lo - log_hi) * t**np.sqrt(lo * hi))


class LabelSampler:
    """Draws label sets with given class frequencies and class groups.

    A label set is ``z_c > threshold_c`` with ``z_c = loading * g_k +
    sqrt(1 - loading^2) * e_c`` (``g_k`` the shared factor of class c's group,
    all standard normal), redrawn until it holds a positive. The thresholds
    are calibrated on a Monte Carlo pool so that the frequencies given at
    least one positive match ``frequencies``; :meth:`sample` then admits
    candidates against per-class quotas.

    Args:
        frequencies (np.ndarray): Target share of images per class (C,).
        groups (np.ndarray): Group index per class (C,).
        loading (float): Weight of the shared group factor. Defaults to 0.6.
        seed (int): Seed of the calibration pool. Defaults to 0.
    """

    def __init__(self,
                 frequencies: np.ndarray,
                 groups: np.ndarray,
                 loading: float = 0.6,
                 seed: int = 0):
        self.frequencies = np.asarray(frequencies, dtype=np.float64)
        self.groups = np.asarray(groups)
        self.loading = loading
        rng = np.random.RandomState(seed)
        marginals = self.frequencies.copy()
        for _ in range(20):
            self.thresholds = ndtri(1. - np.clip(marginals, 1e-6, 1 - 1e-6))
            pool = self._draw(rng, 20000)
            measured = pool.mean(0)
            marginals *= self.frequencies / np.maximum(measured, 1e-6)

    def _draw(self, rng: np.random.RandomState, num: int) -> np.ndarray:
        """Candidate label sets that hold at least one positive."""
        num_groups = self.groups.max() + 1
        shared = rng.randn(num, num_groups)[:, self.groups]
        own = rng.randn(num, len(self.frequencies))
        latent = self.loading * shared + np.sqrt(1 - self.loading**2) * own
        labels = latent > self.thresholds
        return labels[labels.any(1)]

    def sample(self, num_images: int,
               rng: np.random.RandomState) -> np.ndarray:
        """``num_images`` label sets (N, C) in 0/1 that meet the quotas.

        Candidates are admitted in draw order while every class they hold
        is under its quota ``round(frequency * num_images)``; once no
        candidate fits, the remaining images get the single class with the
        most quota left, and quota still left is added to images without
        the class (those with a class of its group first). Every class then
        meets its quota exactly; rows come out shuffled.
        """
        quotas = np.round(self.frequencies * num_images).astype(int)
        counts = np.zeros_like(quotas)
        rows: List[np.ndarray] = []
        misses = 0
        while len(rows) < num_images and misses < 20:
            admitted = 0
            for labels in self._draw(rng, 4 * num_images + 100):
                if len(rows) == num_images:
                    break
                if (counts[labels] < quotas[labels]).all():
                    counts += labels
                    rows.append(labels)
                    admitted += 1
            misses = misses + 1 if admitted < max(1, num_images // 1000) \
                else 0
        while len(rows) < num_images:
            labels = np.zeros(len(quotas), dtype=bool)
            labels[np.argmax(quotas - counts)] = True
            counts += labels
            rows.append(labels)
        matrix = np.array(rows)
        # Quota left over (admission favours small label sets): add the
        # class to images without it, those holding a class of its group
        # first.
        for c in np.nonzero(counts < quotas)[0]:
            free = np.nonzero(~matrix[:, c])[0]
            grouped = matrix[free][:, self.groups == self.groups[c]].any(1)
            free = np.concatenate([rng.permutation(free[grouped]),
                                   rng.permutation(free[~grouped])])
            matrix[free[:quotas[c] - counts[c]], c] = True
        return matrix[rng.permutation(num_images)].astype(np.float64)


def label_statistics(labels: np.ndarray, groups: np.ndarray) -> Dict:
    """Measured statistics of a label matrix.

    Returns:
        dict: ``avg_positives``, ``max_frequency``, ``min_frequency``,
        ``an_false_negative_rate`` (the share of the labels AN assumes
        negative that are positive: ``(positives - 1) / (C - 1)`` per image,
        averaged over entries), and ``within_group_lift`` /
        ``between_group_lift``: mean ``P(a, b) / (P(a) P(b))`` over class pairs
        of the same group and of different groups.
    """
    num_images, num_classes = labels.shape
    freq = labels.mean(0)
    positives = labels.sum(1)
    joint = labels.T @ labels / num_images
    lift = joint / np.maximum(np.outer(freq, freq), 1e-12)
    same = groups[:, None] == groups[None, :]
    off_diagonal = ~np.eye(num_classes, dtype=bool)
    return dict(
        avg_positives=float(positives.mean()),
        max_frequency=float(freq.max()),
        min_frequency=float(freq.min()),
        an_false_negative_rate=float(
            (positives - 1).sum() / (num_images * (num_classes - 1))),
        within_group_lift=float(lift[same & off_diagonal].mean()),
        between_group_lift=float(lift[~same].mean()))


# ---------------------------------------------------------------- rendering


@lru_cache(maxsize=None)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


class SceneRenderer:
    """Composes glyph scenes.

    Args:
        image_size (int): Side of the square image in pixels.
        hand_images (np.ndarray): Handwritten digits (M, 8, 8) in 0..16.
        hand_targets (np.ndarray): Their digits (M,).
        glyph_scale (tuple[float, float]): Glyph height as a share of the
            image side. Defaults to (0.18, 0.45).
        occlusion_prob (float): Chance that a placed glyph gets an occluding
            patch over 20-45% of its box. Defaults to 0.35.
        distractors_mean (float): Mean (Poisson) number of distractor glyphs
            per image. Defaults to 1.5.
    """

    def __init__(self,
                 image_size: int,
                 hand_images: np.ndarray,
                 hand_targets: np.ndarray,
                 glyph_scale: Tuple[float, float] = (0.18, 0.45),
                 occlusion_prob: float = 0.35,
                 distractors_mean: float = 1.5):
        self.size = image_size
        self.hand_images = hand_images
        self.hand_by_digit = [np.nonzero(hand_targets == d)[0]
                              for d in range(10)]
        self.glyph_scale = glyph_scale
        self.occlusion_prob = occlusion_prob
        self.distractors_mean = distractors_mean

    def _mask(self, glyph: str, height: int,
              rng: np.random.RandomState) -> Image.Image:
        """A grey mask of one glyph instance, about ``height`` pixels high."""
        kind, what = glyph.split(':', 1)
        if kind == 'hand':
            digit = self.hand_images[rng.choice(self.hand_by_digit[int(what)])]
            mask = Image.fromarray((digit / 16. * 255).astype(np.uint8))
            mask = mask.resize((height, height), Image.BILINEAR)
        elif kind == 'shape':
            mask = Image.new('L', (height, height))
            draw = ImageDraw.Draw(mask)
            if what == 'ellipse':
                w = int(height * rng.uniform(0.3, 1.))
                draw.ellipse((0, 0, w, height - 1), outline=255,
                             width=max(1, height // 10))
            else:
                points = [tuple(p) for p in rng.randint(0, height, (5, 2))]
                draw.polygon(points, fill=255)
        else:
            font = _font(max(8, int(height * 1.3)))
            stroke = int(rng.randint(0, 3) * height / 40)
            box = font.getbbox(what, stroke_width=stroke)
            mask = Image.new('L', (box[2] - box[0] + 2, box[3] - box[1] + 2))
            ImageDraw.Draw(mask).text((1 - box[0], 1 - box[1]), what,
                                      font=font, fill=255,
                                      stroke_width=stroke, stroke_fill=255)
        stretch = rng.uniform(0.75, 1.3)
        mask = mask.resize((max(4, int(mask.width * stretch)), mask.height),
                           Image.BILINEAR)
        return mask.rotate(rng.uniform(-25, 25), Image.BILINEAR, expand=True)

    def _texture_object(self, glyph: str, height: int,
                        rng: np.random.RandomState
                        ) -> Tuple[np.ndarray, np.ndarray]:
        """A textured object about ``height`` pixels high: its colours
        (h, w, 3) and its shape's mask (h, w) in [0, 1]."""
        _, family, color = glyph.split(':')
        h = height
        w = max(8, int(h * rng.uniform(0.7, 1.4)))
        shape = Image.new('L', (w, h))
        draw = ImageDraw.Draw(shape)
        if rng.rand() < 0.5:
            draw.ellipse((0, 0, w - 1, h - 1), fill=255)
        else:  # a convex polygon around the centre
            angles = np.sort(rng.uniform(0, 2 * np.pi, rng.randint(5, 9)))
            radius = rng.uniform(0.75, 1., len(angles))
            draw.polygon([(w / 2 * (1 + r * np.cos(a)),
                           h / 2 * (1 + r * np.sin(a)))
                          for a, r in zip(angles, radius)], fill=255)
        mask = np.asarray(shape, np.float32) / 255.
        fg = np.clip(np.array(TEXTURE_COLORS[color], np.float32) +
                     rng.uniform(-0.08, 0.08, 3), 0, 1)
        bg = fg * rng.uniform(0.15, 0.35)
        # the pattern's period: about a tenth of a 128-pixel image
        period = self.size / 128 * 10 * rng.uniform(0.8, 1.25)
        on = texture_pattern(family, h, w, period,
                             rng.uniform(0, np.pi), rng)
        colors = np.where(on[..., None], fg, bg).astype(np.float32)
        return colors, mask

    def _background(self, rng: np.random.RandomState) -> np.ndarray:
        size = self.size
        ramp = np.linspace(0, 1, size, dtype=np.float32)
        angle = rng.uniform(0, 2 * np.pi)
        ramp = (np.cos(angle) * ramp[None, :] + np.sin(angle) * ramp[:, None])
        ramp = (ramp - ramp.min()) / max(np.ptp(ramp), 1e-6)
        a, b = rng.rand(3), rng.rand(3)
        canvas = a + (b - a) * ramp[..., None] * rng.uniform(0.2, 0.8)
        blobs = Image.fromarray(
            (rng.rand(6, 6, 3) * 255).astype(np.uint8)).resize(
                (size, size), Image.BICUBIC)
        canvas += (np.asarray(blobs, np.float32) / 255. - 0.5) * \
            rng.uniform(0.1, 0.5)
        return canvas.astype(np.float32)

    def _place(self, canvas: np.ndarray, glyph: str,
               rng: np.random.RandomState) -> float:
        """Draw one glyph instance onto ``canvas``; return its area in
        pixels (its mask inside the image, before later glyphs and its
        occluding patch cover parts of it)."""
        size = self.size
        height = int(size * rng.uniform(*self.glyph_scale))
        if glyph.startswith('texture:'):
            colors, mask = self._texture_object(glyph, height, rng)
        else:
            colors = None
            mask = np.asarray(self._mask(glyph, height, rng),
                              np.float32) / 255.
        h, w = mask.shape
        h, w = min(h, size), min(w, size)
        mask = mask[:h, :w]
        # at least 80% of the glyph's box inside the image
        y = rng.randint(-h // 10, size - h + h // 10 + 1)
        x = rng.randint(-w // 10, size - w + w // 10 + 1)
        ys, xs = slice(max(y, 0), min(y + h, size)), slice(
            max(x, 0), min(x + w, size))
        crop = (slice(ys.start - y, ys.stop - y),
                slice(xs.start - x, xs.stop - x))
        mask = mask[crop]
        region = canvas[ys, xs]
        if colors is not None:
            color = colors[crop]
        else:
            local = region.mean((0, 1))
            color = rng.rand(3).astype(np.float32)
            # keep a contrast of at least 0.2 in mean intensity
            shift = rng.uniform(0.2, 0.7) - abs(color.mean() - local.mean())
            if shift > 0:
                color = np.clip(
                    color +
                    np.sign(color.mean() - local.mean() + 1e-6) * shift, 0,
                    1)
        alpha = mask[..., None] * rng.uniform(0.75, 1.)
        region[...] = region * (1 - alpha) + color * alpha
        if rng.rand() < self.occlusion_prob:
            oh = int(mask.shape[0] * rng.uniform(0.2, 0.45)) + 1
            ow = int(mask.shape[1] * rng.uniform(0.2, 0.45)) + 1
            oy = ys.start + rng.randint(0, max(1, mask.shape[0] - oh + 1))
            ox = xs.start + rng.randint(0, max(1, mask.shape[1] - ow + 1))
            canvas[oy:oy + oh, ox:ox + ow] = rng.rand(3)
        return float(mask.sum())

    def render(self, glyphs: Sequence[str], distractors: Sequence[str],
               rng: np.random.RandomState
               ) -> Tuple[Image.Image, Dict[str, float]]:
        """An RGB scene with every glyph of ``glyphs`` (once or twice) and a
        Poisson number of glyphs from ``distractors``, in random order, and
        the area of each glyph of ``glyphs``: its largest instance's, as
        :meth:`_place` measures it."""
        items = []
        for glyph in glyphs:
            items += [glyph] * (1 + (rng.rand() < 0.25))
        for _ in range(rng.poisson(self.distractors_mean)):
            items.append(distractors[rng.randint(len(distractors))])
        canvas = self._background(rng)
        areas = dict.fromkeys(glyphs, 0.)
        for i in rng.permutation(len(items)):
            area = self._place(canvas, items[i], rng)
            if items[i] in areas:  # distractors belong to no class
                areas[items[i]] = max(areas[items[i]], area)
        canvas += rng.randn(*canvas.shape).astype(np.float32) * \
            rng.uniform(0., 0.05)
        image = Image.fromarray(
            (np.clip(canvas, 0, 1) * 255).astype(np.uint8), 'RGB')
        if rng.rand() < 0.3:
            image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3,
                                                                      1.)))
        return image, areas


def texture_pattern(family: str, height: int, width: int, period: float,
                    angle: float, rng: np.random.RandomState) -> np.ndarray:
    """Boolean (height, width) pattern of a texture family, rotated by
    ``angle`` around the centre, with spatial period ``period`` pixels."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    y -= height / 2
    x -= width / 2
    u = np.cos(angle) * x + np.sin(angle) * y
    v = -np.sin(angle) * x + np.cos(angle) * y
    k = 2 * np.pi / period
    if family == 'stripes':
        return np.sin(k * u) > 0
    if family == 'checker':
        return (np.floor(u / period * 2) + np.floor(v / period * 2)) % 2 > 0
    if family == 'dots':
        du, dv = u % period - period / 2, v % period - period / 2
        return du**2 + dv**2 < (0.3 * period)**2
    if family == 'rings':
        return np.sin(k * np.hypot(u, v)) > 0
    if family == 'grid':
        return (u % period < 0.25 * period) | (v % period < 0.25 * period)
    if family == 'waves':
        return np.sin(k * (u + 0.3 * period * np.sin(k / 2 * v))) > 0
    if family == 'hatch':
        return (np.sin(k * (u + v) / np.sqrt(2)) > 0.5) | (
            np.sin(k * (u - v) / np.sqrt(2)) > 0.5)
    if family == 'pinwheel':  # sectors a period wide at a quarter size
        turns = max(2, round(np.pi * min(height, width) / 4 / period))
        return np.sin(turns * np.arctan2(v, u)) > 0
    if family == 'bricks':
        row = np.floor(v / (period / 2))
        return ((u + row % 2 * period / 2) % period < 0.8 * period) & (
            v % (period / 2) < 0.35 * period)
    if family == 'speckle':
        cells = max(2, int(period / 4))
        coarse = rng.rand(height // cells + 1, width // cells + 1) < 0.3
        return np.kron(coarse, np.ones((cells, cells), bool))[:height, :width]
    raise ValueError(f'unknown texture family {family!r}')


# ---------------------------------------------------------------- dataset


def proxy_groups(like: str, seed: int = 0) -> np.ndarray:
    """Co-occurrence group of each class (classes in column order)."""
    targets = PROXY_TARGETS[like]
    rng = np.random.RandomState(seed)
    groups = np.arange(targets.num_classes) // targets.group_size
    return groups[rng.permutation(targets.num_classes)]


def proxy_label_sampler(like: str, seed: int = 0) -> LabelSampler:
    """The :class:`LabelSampler` of a proxy, class frequencies assigned to
    the classes in a seeded random order."""
    targets = PROXY_TARGETS[like]
    rng = np.random.RandomState(seed + 1)
    frequencies = class_frequencies(targets)[rng.permutation(
        targets.num_classes)]
    return LabelSampler(frequencies, proxy_groups(like, seed), seed=seed)


def split_sizes(like: str, fraction: float = 1.) -> Dict[str, int]:
    """Images per official split at ``fraction`` of the real sizes."""
    if not 0 < fraction <= 1:
        raise ValueError(f'fraction must be in (0, 1], got {fraction}')
    targets = PROXY_TARGETS[like]
    return dict(train=max(10, int(round(fraction * targets.num_train))),
                val=max(10, int(round(fraction * targets.num_test))))


def make_proxy_dataset(out_dir: str,
                       like: str = 'voc',
                       fraction: float = 1.,
                       image_size: int = 128,
                       seed: int = 0,
                       observe_seed: int = 1200,
                       sizes: Optional[Dict[str, int]] = None,
                       classes: str = 'textures') -> Dict:
    """Write a proxy dataset into ``out_dir``; deterministic in its seeds.

    Args:
        out_dir (str): Output folder.
        like (str): ``'voc'`` or ``'coco'`` (:data:`PROXY_TARGETS`).
            Defaults to ``'voc'``.
        fraction (float): Share of the real split sizes. Defaults to 1.
        image_size (int): Side of the square images. Defaults to 128.
        seed (int): Seed of labels and scenes. Defaults to 0.
        observe_seed (int): Seed of the observed positives
            (:func:`observe_uniform`). Defaults to 1200.
        sizes (dict, optional): Images per official split
            (``train``, ``val``); overrides ``fraction``.
        classes (str): The class set of :data:`CLASS_SETS`: ``'textures'``
            (coloured pattern families on objects of 25-55% of the side)
            or ``'glyphs'`` (characters and handwritten digits of 18-45%).
            Defaults to ``'textures'``.

    Returns:
        dict: ``targets``, ``groups`` and per official split its ``images``
        and :func:`label_statistics`, plus the ``protocol`` splits.
    """
    if like not in PROXY_TARGETS:
        raise ValueError(f'like must be one of {sorted(PROXY_TARGETS)}, got '
                         f'{like!r}')
    from sklearn.datasets import load_digits
    if classes not in CLASS_SETS:
        raise ValueError(f'classes must be one of {sorted(CLASS_SETS)}, '
                         f'got {classes!r}')
    sizes = sizes or split_sizes(like, fraction)
    glyphs, distractors = CLASS_SETS[classes][like], DISTRACTOR_GLYPHS[like]
    scale = (0.25, 0.55) if classes == 'textures' else (0.18, 0.45)
    sampler = proxy_label_sampler(like, seed)
    groups = proxy_groups(like, seed)
    digits = load_digits()
    rng = np.random.RandomState(seed)
    order = rng.permutation(len(digits.target))
    # handwriting of the test images is never seen in training
    pools = dict(train=order[:1200], val=order[1200:])
    progress = ProgressBar(sizes['train'] + sizes['val'])
    summary: Dict = dict(classes=classes,
                         targets=PROXY_TARGETS[like]._asdict(),
                         groups=groups.tolist(), sizes=dict(sizes))
    for split in ('train', 'val'):
        renderer = SceneRenderer(image_size, digits.images[pools[split]],
                                 digits.target[pools[split]],
                                 glyph_scale=scale)
        labels = sampler.sample(sizes[split], rng)
        os.makedirs(osp.join(out_dir, 'images', split), exist_ok=True)
        paths = []
        salience = np.zeros_like(labels)
        for i, row in enumerate(labels):
            present = np.nonzero(row)[0]
            path = osp.join(split, f'{split}_{i:06d}.jpg')
            image, areas = renderer.render([glyphs[c] for c in present],
                                           distractors, rng)
            image.save(osp.join(out_dir, 'images', path), quality=90)
            salience[i, present] = [areas[glyphs[c]] for c in present]
            paths.append(path)
            progress.update()
        observed = observe_uniform(labels, seed=observe_seed)
        for name, array in (('images', np.array(paths)), ('labels', labels),
                            ('labels_obs', observed),
                            ('salience', salience)):
            np.save(osp.join(out_dir, f'formatted_{split}_{name}.npy'), array)
        summary[split] = dict(images=len(paths),
                              **label_statistics(labels, groups))
    train_idx, val_idx = split_train_val(sizes['train'])
    summary['protocol'] = dict(train=len(train_idx), val=len(val_idx),
                               test=sizes['val'])
    with open(osp.join(out_dir, 'classes.txt'), 'w') as f:
        f.write(''.join(f'{class_name(g)}\n' for g in glyphs))
    return summary


def record_statistics(path: str, name: str, summary: Dict,
                      command: str) -> None:
    """Merge a generated dataset's ``summary`` into the json ``path`` under
    ``name``, with the ``command`` that generated it (other entries kept)."""
    found = {}
    if osp.isfile(path):
        with open(path) as f:
            found = json.load(f)
    found[name] = dict(summary, command=command)
    with open(path, 'w') as f:
        json.dump(found, f, indent=1, sort_keys=True)
        f.write('\n')


def format_proxy_summary(like: str, summary: Dict) -> str:
    """Measured statistics of each official split beside the targets."""
    targets = PROXY_TARGETS[like]
    target_fnr = (targets.avg_positives - 1) / (targets.num_classes - 1)
    rows = [('statistic', 'target', 'train (measured)', 'test (measured)')]
    for key, target in (('avg_positives', targets.avg_positives),
                        ('max_frequency', targets.max_frequency),
                        ('min_frequency', targets.min_frequency),
                        ('an_false_negative_rate', target_fnr),
                        ('within_group_lift', None),
                        ('between_group_lift', None)):
        rows.append((key, '-' if target is None else f'{target:.4f}',
                     f'{summary["train"][key]:.4f}',
                     f'{summary["val"][key]:.4f}'))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    protocol = summary['protocol']
    lines = [f'{like}-like proxy: {targets.num_classes} classes; official '
             f'train {summary["train"]["images"]} images (protocol: train '
             f'{protocol["train"]}, val {protocol["val"]}), official val '
             f'(= test) {summary["val"]["images"]}']
    lines += ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
              for r in rows]
    return '\n'.join(lines)
