"""The proxy benchmarks: label statistics against their targets, the written
interchange files and the protocol applied to them, and the generator kept
out of what ``import spml_mm`` loads."""
import json
import os.path as osp
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from spml_mm.benchmarks.proxy import (CLASS_GLYPHS, CLASS_SETS,
                                      CLASS_TEXTURES, DISTRACTOR_GLYPHS,
                                      PROXY_TARGETS, TEXTURE_FAMILIES,
                                      class_frequencies, class_name,
                                      format_proxy_summary, label_statistics,
                                      make_proxy_dataset, proxy_groups,
                                      proxy_label_sampler, SceneRenderer,
                                      split_sizes, texture_pattern)
from spml_mm.datasets import observe_uniform
from tests.conftest import REPO

#: The generator's modules (where it is now and where it was) loaded in a
#: fresh interpreter after ``import spml_mm`` and after importing the
#: generator.
LOADED = """\
import json, sys
def loaded():
    return sorted(name for name in sys.modules
                  if name.startswith('spml_mm.benchmarks')
                  or name == 'spml_mm.datasets.proxy')
import spml_mm
plugin = loaded()
import spml_mm.benchmarks.proxy
print(json.dumps(dict(plugin=plugin, generator=loaded())))
"""


def within(measured, target, tolerance=0.05):
    return abs(measured - target) <= tolerance * target


@pytest.mark.parametrize('like', ['voc', 'coco'])
def test_class_frequencies_span_the_targets_and_sum_to_the_positives(like):
    targets = PROXY_TARGETS[like]
    freq = class_frequencies(targets)
    assert len(freq) == targets.num_classes
    assert freq[0] == pytest.approx(targets.max_frequency)
    assert freq[-1] == pytest.approx(targets.min_frequency)
    assert freq.sum() == pytest.approx(targets.avg_positives, rel=1e-6)
    assert (np.diff(freq) < 0).all()


@pytest.mark.parametrize('classes', sorted(CLASS_SETS))
def test_classes_are_distinct_and_distractors_belong_to_none(classes):
    for like, glyphs in CLASS_SETS[classes].items():
        assert len(glyphs) == PROXY_TARGETS[like].num_classes
        names = [class_name(g) for g in glyphs]
        assert len(set(names)) == len(names)
        assert not set(glyphs) & set(DISTRACTOR_GLYPHS[like])


def test_texture_classes_are_families_in_colours():
    # VOC-like: every family in two colours; COCO-like: in eight
    assert class_name(CLASS_TEXTURES['voc'][0]) == 'stripes_red'
    assert class_name(CLASS_TEXTURES['voc'][10]) == 'stripes_cyan'
    for like, count in (('voc', 2), ('coco', 8)):
        families = [g.split(':')[1] for g in CLASS_TEXTURES[like]]
        assert all(families.count(f) == count for f in TEXTURE_FAMILIES)


@pytest.mark.parametrize('family', TEXTURE_FAMILIES)
def test_every_texture_family_is_a_two_colour_pattern_of_its_period(
        family):
    rng = np.random.RandomState(0)
    small = texture_pattern(family, 60, 80, 10., 0.3, rng)
    large = texture_pattern(family, 60, 80, 20., 0.3, rng)
    assert small.shape == (60, 80) and small.dtype == bool
    for pattern in (small, large):
        assert 0.1 < pattern.mean() < 0.9
    # a shorter period alternates more often along a row
    changes = [np.abs(np.diff(p.astype(int), axis=1)).sum()
               for p in (small, large)]
    assert changes[0] > changes[1]
    with pytest.raises(ValueError, match='unknown texture family'):
        texture_pattern('plaid', 8, 8, 4., 0., rng)


@pytest.mark.parametrize('like,num_images', [('voc', 500), ('coco', 1250)])
def test_sampled_label_sets_meet_the_targets_within_5_percent(
        like, num_images):
    # the smallest sizes at which the rarest class's quota rounds to its
    # target (VOC: 2.5% of 500 = 12.5 images, COCO: 0.8% of 1,250 = 10)
    targets = PROXY_TARGETS[like]
    labels = proxy_label_sampler(like).sample(num_images,
                                              np.random.RandomState(3))
    stats = label_statistics(labels, proxy_groups(like))
    assert labels.shape == (num_images, targets.num_classes)
    assert labels.sum(1).min() >= 1  # every image has a positive
    assert within(stats['avg_positives'], targets.avg_positives)
    assert within(stats['max_frequency'], targets.max_frequency)
    assert within(stats['min_frequency'], targets.min_frequency)
    expected_fnr = (targets.avg_positives - 1) / (targets.num_classes - 1)
    assert within(stats['an_false_negative_rate'], expected_fnr)
    # classes of a group occur together more often than chance, and more
    # often than classes of different groups
    assert stats['within_group_lift'] > 1.5 > stats['between_group_lift']


def test_label_statistics_by_hand():
    labels = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 1]], float)
    stats = label_statistics(labels, np.array([0, 0, 1]))
    assert stats['avg_positives'] == 7 / 4
    assert stats['max_frequency'] == 3 / 4
    assert stats['min_frequency'] == 2 / 4
    # assumed negatives: 2 per image; positives among them: 1+0+0+2
    assert stats['an_false_negative_rate'] == 3 / 8
    # classes 0 and 1 (one group): P(0,1) = 2/4, P(0) P(1) = 3/4 * 2/4
    assert stats['within_group_lift'] == pytest.approx((2 / 4) / (3 / 8))


def test_split_sizes_follow_the_real_datasets():
    assert split_sizes('voc') == dict(train=5717, val=5823)
    assert split_sizes('coco', 0.1) == dict(train=8208, val=4014)
    with pytest.raises(ValueError, match='fraction'):
        split_sizes('voc', 0.)


@pytest.fixture(scope='module')
def small_voc(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('proxy_voc'))
    summary = make_proxy_dataset(root, 'voc', image_size=64, seed=0,
                                 sizes=dict(train=500, val=500))
    return root, summary


def test_written_proxy_meets_the_targets_and_the_interchange_format(
        small_voc):
    root, summary = small_voc
    targets = PROXY_TARGETS['voc']
    for split in ('train', 'val'):
        labels = np.load(osp.join(root, f'formatted_{split}_labels.npy'))
        images = np.load(osp.join(root, f'formatted_{split}_images.npy'))
        observed = np.load(
            osp.join(root, f'formatted_{split}_labels_obs.npy'))
        assert labels.shape == (500, 20) and len(images) == 500
        # the protocol's observed positives, as prepare_spml.py writes them
        np.testing.assert_array_equal(observed,
                                      observe_uniform(labels, seed=1200))
        assert ((observed == 1).sum(1) == 1).all()
        stats = summary[split]
        for key in ('avg_positives', 'max_frequency', 'min_frequency'):
            assert within(stats[key], getattr(targets, key)), (split, key)
        with Image.open(osp.join(root, 'images', images[0])) as image:
            assert image.size == (64, 64) and image.mode == 'RGB'
    assert summary['protocol'] == dict(train=400, val=100, test=500)
    classes = open(osp.join(root, 'classes.txt')).read().split()
    assert classes[:2] == ['stripes_red', 'checker_red']
    assert len(classes) == 20 and summary['classes'] == 'textures'
    text = format_proxy_summary('voc', summary)
    assert 'avg_positives           1.4600' in text


def test_proxy_loads_through_the_dataset_configs(small_voc):
    root, _ = small_voc
    from tests.datasets.conftest import _config_dataset
    config = 'configs/an/efficientnet-lite0_proxy-voc.py'
    train = _config_dataset(config, 'train', root)
    test = _config_dataset(config, 'test', root)
    assert len(train) == 400 and len(test) == 500
    info = train.get_data_info(0)
    assert len(info['gt_label']) == 1 and osp.isfile(info['img_path'])


def test_generation_is_deterministic_in_its_seed(tmp_path):
    kwargs = dict(like='coco', image_size=32, sizes=dict(train=12, val=10))
    make_proxy_dataset(str(tmp_path / 'a'), seed=1, **kwargs)
    make_proxy_dataset(str(tmp_path / 'b'), seed=1, **kwargs)
    make_proxy_dataset(str(tmp_path / 'c'), seed=2, **kwargs)

    def read(name, run):
        return (tmp_path / run / name).read_bytes()

    for name in ('formatted_train_labels.npy', 'images/val/val_000003.jpg'):
        assert read(name, 'a') == read(name, 'b')
        assert read(name, 'a') != read(name, 'c')


def test_a_texture_object_area_is_the_pixels_it_covers():
    renderer = SceneRenderer(64, np.zeros((1, 8, 8)), np.zeros(1),
                             glyph_scale=(0.25, 0.55), occlusion_prob=0.)
    for seed, glyph in enumerate(CLASS_TEXTURES['voc'][::4]):
        canvas = np.zeros((64, 64, 3), np.float32)
        area = renderer._place(canvas, glyph, np.random.RandomState(seed))
        covered = (canvas != 0).any(2).sum()
        # the anti-aliased edge counts in part: within a tenth
        assert 50 < area <= covered <= 1.1 * area, glyph


def test_largest_observes_the_largest_object(tmp_path, monkeypatch):
    """The salience file holds the area of each label's largest instance,
    as drawn, and ``observe='largest'`` keeps the label of the largest."""
    import spml_mm  # noqa: F401
    from spml_mm.benchmarks import proxy
    from spml_mm.datasets import SPMLDataset
    scenes = []  # per image: (glyph, area) of every object drawn
    render, place = proxy.SceneRenderer.render, proxy.SceneRenderer._place

    def spy_render(self, *args):
        scenes.append([])
        return render(self, *args)

    def spy_place(self, canvas, glyph, rng):
        scenes[-1].append((glyph, place(self, canvas, glyph, rng)))
        return scenes[-1][-1][1]

    monkeypatch.setattr(proxy.SceneRenderer, 'render', spy_render)
    monkeypatch.setattr(proxy.SceneRenderer, '_place', spy_place)
    make_proxy_dataset(str(tmp_path), 'voc', image_size=48, seed=3,
                       sizes=dict(train=12, val=4))
    labels = np.load(tmp_path / 'formatted_train_labels.npy')
    salience = np.load(tmp_path / 'formatted_train_salience.npy')
    glyphs = CLASS_TEXTURES['voc']
    expected = np.zeros_like(salience)
    for k, scene in enumerate(scenes[:len(labels)]):  # train split first
        for glyph, area in scene:
            if glyph in glyphs:  # not a distractor
                c = glyphs.index(glyph)
                expected[k, c] = max(expected[k, c], area)
    np.testing.assert_array_equal(salience, expected)
    assert ((salience > 0) == (labels == 1)).all()
    several = np.flatnonzero(labels.sum(1) > 1)
    assert len(several) >= 2  # images where the rule has a choice
    data = SPMLDataset(str(tmp_path), observe='largest', val_frac=0.,
                       pipeline=[])
    kept = [data.get_data_info(k)['gt_label'].tolist() for k in
            range(len(labels))]
    assert kept == [[int(expected[k].argmax())] for k in range(len(labels))]


def test_glyph_class_set_and_unknown_sets(tmp_path):
    summary = make_proxy_dataset(str(tmp_path / 'g'), 'voc', image_size=32,
                                 sizes=dict(train=10, val=10),
                                 classes='glyphs')
    classes = (tmp_path / 'g' / 'classes.txt').read_text().split()
    assert classes == [class_name(g) for g in CLASS_GLYPHS['voc']]
    assert summary['classes'] == 'glyphs'
    with pytest.raises(ValueError, match='classes must be one of'):
        make_proxy_dataset(str(tmp_path / 'x'), 'voc', classes='emoji')


@pytest.mark.slow
def test_import_spml_mm_leaves_the_generator_out():
    """``custom_imports=['spml_mm']`` imports ``spml_mm``: the generator
    stays unloaded until a tool imports :mod:`spml_mm.benchmarks.proxy` by
    name. (SciPy and Pillow's fonts, which it uses, are loaded anyway, by
    scikit-learn's metrics and by MMPretrain.)"""
    proc = subprocess.run([sys.executable, '-c', LOADED],
                          cwd=REPO,
                          capture_output=True,
                          text=True,
                          check=True)
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded['plugin'] == []
    assert loaded['generator'] == [
        'spml_mm.benchmarks', 'spml_mm.benchmarks.proxy'
    ]
