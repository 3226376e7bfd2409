"""tools/score_teacher.py: the file, model and CLIP sources end to end on the
demo dataset, offline (tiny randomly initialised teachers built from
MMPretrain's own classes, a tokenizer written here), the crops, the cache,
resuming and the refusals."""
import csv
import importlib.util
import inspect
import json
import os
import os.path as osp
import re
import subprocess

import mmcv
import numpy as np
import pytest
import torch
from PIL import Image

from spml_mm.datasets import SPMLDataset
from spml_mm.datasets.teacher_scores import (dataset_image_paths,
                                             load_teacher_scores,
                                             read_teacher_scores)
from spml_mm.teacher.scorer import (CLIPTeacher, build_teacher,
                                    whole_and_crops)
from tests.conftest import PYTHON, REPO

CONFIG = osp.join(REPO, 'configs/an/an_vgg11bn_demo.py')
VLPL_CONFIG = osp.join(REPO, 'configs/vlpl/vlpl_vgg11bn_demo.py')


def load_tool():
    spec = importlib.util.spec_from_file_location(
        'score_teacher', osp.join(REPO, 'tools/score_teacher.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(root, *args, options=()):
    """The tool's exit status on the demo at ``root``; ``options`` are more
    --cfg-options."""
    return load_tool().main([
        CONFIG, *args, '--cfg-options',
        f'train_dataloader.dataset.data_root={root}', *options
    ])


@pytest.fixture(scope='module')
def dataset(tiny_demo):
    return SPMLDataset(data_root=tiny_demo, split='train', pipeline=[])


# ---------------------------------------------------------------- file


def test_file_csv_keyed_by_path(tiny_demo, dataset, tmp_path, capsys):
    paths = dataset_image_paths(dataset)
    classes = list(dataset.metainfo['classes'])
    rng = np.random.RandomState(0)
    scores = rng.rand(len(paths), 10)
    # columns in another order, keys absolute or trailing parts, rows
    # shuffled, and one image that is not in the training split
    order = rng.permutation(len(paths))
    csv_path = str(tmp_path / 'mine.csv')
    with open(csv_path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['image'] + classes[::-1])
        for k, i in enumerate(order):
            key = osp.join(tiny_demo, paths[i]) if k % 2 else \
                osp.basename(paths[i])
            writer.writerow([key] + [f'{v:.6f}' for v in scores[i, ::-1]])
        writer.writerow(['images/val/val_00000.png'] + ['0.5'] * 10)
    out = str(tmp_path / 'teacher.npz')
    assert run(tiny_demo, '--source', 'file', '--scores', csv_path, '--out',
               out) == 0
    printed = capsys.readouterr().out
    assert '1 rows of' in printed and 'are left out' in printed
    loaded = load_teacher_scores(out, dataset)
    torch.testing.assert_close(loaded, torch.from_numpy(scores).float(),
                               atol=1e-6, rtol=0)
    meta = read_teacher_scores(out)['meta']
    assert meta['source'] == 'file' and meta['rows_left_out'] == 1
    assert meta['class_names_from'] == 'file'
    assert meta['command'].startswith('python tools/score_teacher.py ')
    assert len(meta['scores_file_sha256']) == 64


def test_file_missing_image_and_logits_refused(tiny_demo, dataset, tmp_path,
                                               capsys):
    paths = dataset_image_paths(dataset)
    npz = str(tmp_path / 'mine.npz')
    np.savez(npz, scores=np.full((len(paths) - 1, 10), 0.5),
             img_paths=np.array(paths[1:]))
    out = str(tmp_path / 't.npz')
    assert run(tiny_demo, '--source', 'file', '--scores', npz, '--out',
               out) == 1
    # a line of its own (under xdist a logger another test closed may
    # print a logging error to the same stream before it)
    err = capsys.readouterr().err
    assert (
        f'error: {npz} has no scores for 1 of the dataset\'s {len(paths)} '
        f"images (first: {paths[0]!r}, relative to {tiny_demo}); score "
        'every training image') in err.splitlines()
    logits = np.random.RandomState(0).randn(len(paths), 10) * 3
    np.savez(npz, scores=logits, img_paths=np.array(paths))
    assert run(tiny_demo, '--source', 'file', '--scores', npz, '--out',
               out) == 1
    assert re.search(
        f'error: {re.escape(npz)}: scores holds \\d+ values outside \\[0, 1\\]'
        '.* apply the sigmoid or softmax', capsys.readouterr().err)
    assert not osp.exists(out)


@pytest.mark.slow
def test_file_cache_reused_or_refused(tiny_demo, dataset, tmp_path,
                                      capsys):
    paths = dataset_image_paths(dataset)
    npz = str(tmp_path / 'mine.npz')
    np.savez(npz, scores=np.full((len(paths), 10), 0.25),
             img_paths=np.array(paths))
    out = str(tmp_path / 't.npz')
    args = ['--source', 'file', '--scores', npz, '--out', out]
    assert run(tiny_demo, *args) == 0
    created = read_teacher_scores(out)['meta']['created']
    capsys.readouterr()
    assert run(tiny_demo, *args) == 0
    assert f'{out} holds these scores already (made {created}); reusing ' \
        'it' in capsys.readouterr().out
    # a subset of its images (indices): reused, as training reuses it;
    # before, refused as made for something else (num_images, images_sha256)
    assert run(tiny_demo, *args,
               options=['train_dataloader.dataset.indices=8']) == 0
    assert (f'{out} holds these scores already for these 8 of its '
            f'{len(paths)} images (made {created}); reusing it'
            ) in capsys.readouterr().out
    # the same file for another class order is refused, not reused
    assert run(tiny_demo, *args, options=[
        'train_dataloader.dataset.classes=[1,0,2,3,4,5,6,7,8,9]'
    ]) == 1
    assert capsys.readouterr().err.strip() == (
        f'error: {out} exists and was made for something else: classes: '
        "the same classes in another order (0: '0' -> '1'; 1: '1' -> '0'). "
        'Pass --overwrite to replace it, or another --out.')
    # so is a changed score file
    np.savez(npz, scores=np.full((len(paths), 10), 0.5),
             img_paths=np.array(paths))
    assert run(tiny_demo, *args) == 1
    assert 'scores_file_sha256: ' in capsys.readouterr().err
    assert run(tiny_demo, *args, '--overwrite') == 0
    np.testing.assert_array_equal(read_teacher_scores(out)['scores'], 0.5)


# ---------------------------------------------------------------- model

TINY_CLASSIFIER = """
model = dict(
    type='ImageClassifier',
    data_preprocessor=dict(type='ClsDataPreprocessor', mean=[45.] * 3,
                           std=[60.] * 3),
    backbone=dict(type='ResNet', depth=18, stem_channels=8,
                  base_channels=8),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(type='{head}', num_classes={num_classes}, in_channels=64))
"""


def write_classifier(tmp_path, head, num_classes=10, classes=None):
    """A tiny classifier's config and checkpoint (with class names)."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    init_default_scope('mmpretrain')
    config = tmp_path / f'{head}.py'
    config.write_text(
        TINY_CLASSIFIER.format(head=head, num_classes=num_classes))
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(str(config)).model)
    model.init_weights()
    checkpoint = str(tmp_path / f'{head}.pth')
    meta = dict(dataset_meta=dict(classes=classes)) if classes else {}
    torch.save(dict(state_dict=model.state_dict(), meta=meta), checkpoint)
    return str(config), checkpoint, model


@pytest.mark.slow
@pytest.mark.parametrize('head,activation', [
    ('MultiLabelLinearClsHead', 'sigmoid'),
    ('LinearClsHead', 'softmax'),
])
def test_model_source(tiny_demo, dataset, tmp_path, head, activation):
    classes = list(dataset.metainfo['classes'])
    # the teacher knows two more classes, in another order
    teacher_classes = ['cat'] + classes[::-1] + ['dog']
    config, checkpoint, model = write_classifier(tmp_path, head, 12,
                                                 teacher_classes)
    out = str(tmp_path / 'model.npz')
    assert run(tiny_demo, '--source', 'model', '--teacher-config', config,
               '--checkpoint', checkpoint, '--image-size', '48',
               '--batch-size', '16', '--out', out) == 0
    loaded = load_teacher_scores(out, dataset)
    # independent reference: the model's own forward on the first images
    from mmcv.transforms import LoadImageFromFile
    paths = dataset_image_paths(dataset)[:5]
    images = torch.stack([
        torch.from_numpy(
            LoadImageFromFile()(dict(
                img_path=osp.join(tiny_demo, p)))['img']).permute(2, 0, 1)
        for p in paths
    ]).float()  # the demo's images are 48 px already
    model.eval()
    with torch.no_grad():
        logits = model(model.data_preprocessor(dict(inputs=images))['inputs'],
                       mode='tensor')
    probs = logits.sigmoid() if activation == 'sigmoid' else \
        logits.softmax(1)
    columns = [teacher_classes.index(c) for c in classes]
    torch.testing.assert_close(loaded[:5], probs[:, columns], atol=1e-5,
                               rtol=1e-4)
    meta = read_teacher_scores(out)['meta']
    assert meta['activation'] == activation
    assert meta['class_names_from'] == 'checkpoint dataset_meta'


def test_model_missing_class_refused(dataset, tmp_path):
    classes = list(dataset.metainfo['classes'])
    config, checkpoint, _ = write_classifier(
        tmp_path, 'MultiLabelLinearClsHead', 10, classes[:-1] + ['ten'])
    with pytest.raises(ValueError,
                       match=re.escape("the teacher does not score 1 of the "
                                       "dataset's classes: ['9']")):
        build_teacher('model', config, checkpoint, classes, 48)


# ---------------------------------------------------------------- clip

WORDS = ['a', 'photo', 'of', 'the', 'digit', '.', 'picture'] + \
    [str(d) for d in range(10)]


class TinyWordTokenizer:
    """A word-level tokenizer from a vocab file: the interface CLIP's
    ``tokenize`` uses (``get_vocab``, ``tokenize``,
    ``convert_tokens_to_ids``)."""

    def __init__(self, vocab_file):
        with open(vocab_file) as f:
            self._vocab = json.load(f)

    def get_vocab(self):
        return dict(self._vocab)

    def tokenize(self, text):
        return re.findall(r'[a-z0-9]+|[^\sa-z0-9]', text.lower())

    def convert_tokens_to_ids(self, tokens):
        return [self._vocab.get(t, self._vocab['<|unk|>']) for t in tokens]


TINY_CLIP = """
model = dict(
    type='CLIPZeroShot',
    vision_backbone=dict(
        type='VisionTransformer',
        arch=dict(embed_dims=32, num_layers=1, num_heads=2,
                  feedforward_channels=64),
        img_size=32, patch_size=16, drop_rate=0.,
        layer_cfgs=dict(act_cfg=dict(type='QuickGELU')), pre_norm=True),
    projection=dict(type='CLIPProjection', in_channels=32, out_channels=16),
    text_backbone=dict(type='CLIPTransformer', width=32, layers=1, heads=2,
                       attn_mask=True),
    tokenizer=dict(type='TinyWordTokenizer', vocab_file='{vocab}'),
    vocab_size={vocab_size},
    transformer_width=32,
    proj_dim=16,
    context_length=16,
    data_preprocessor=dict(
        type='MultiModalDataPreprocessor',
        mean=[0.48145466 * 255, 0.4578275 * 255, 0.40821073 * 255],
        std=[0.26862954 * 255, 0.26130258 * 255, 0.27577711 * 255],
        to_rgb=True))
"""


@pytest.fixture
def tiny_clip(tmp_path):
    """A tiny CLIPZeroShot config (MMPretrain's classes, random weights)
    and a checkpoint of it.

    Without ``transformers`` MMPretrain registers a placeholder under
    ``CLIPZeroShot``; the CLIP classes themselves do not need it, so the
    fixture registers the real class for the test and puts the placeholder
    back afterwards.
    """
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS, TOKENIZER
    init_default_scope('mmpretrain')
    placeholder = MODELS.get('CLIPZeroShot')
    if not inspect.isclass(placeholder):
        MODELS._module_dict.pop('CLIPZeroShot')
        from mmpretrain.models.multimodal.clip.clip import CLIPZeroShot
        MODELS.register_module('CLIPZeroShot', module=CLIPZeroShot,
                               force=True)
    TOKENIZER.register_module('TinyWordTokenizer', module=TinyWordTokenizer,
                              force=True)
    vocab = {w: i for i, w in enumerate(
        ['<|unk|>', '<|startoftext|>'] + WORDS + ['<|endoftext|>'])}
    vocab_file = tmp_path / 'vocab.json'
    vocab_file.write_text(json.dumps(vocab))
    config = tmp_path / 'tiny_clip.py'
    config.write_text(
        TINY_CLIP.format(vocab=vocab_file, vocab_size=len(vocab)))
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(str(config)).model)
    checkpoint = str(tmp_path / 'tiny_clip.pth')
    torch.save(dict(state_dict=model.state_dict(), meta={}), checkpoint)
    yield str(config), checkpoint, model
    if not inspect.isclass(placeholder):
        MODELS.register_module('CLIPZeroShot', module=placeholder,
                               force=True)


def clip_reference(model, images, classes, prompts, temperature):
    """CLIP scores written from CLIPZeroShot's own prototype code:
    ``prepare_text_prototype`` with our prompts, then softmax(cos / T)."""
    model.prototype = [c.replace('_', ' ') for c in classes]
    model.prompt = [lambda c, p=p: p.format(c) for p in prompts]
    model.text_prototype_embeds = None
    model.eval()
    with torch.no_grad():
        inputs = model.data_preprocessor(dict(inputs=images))['images']
        model.prepare_text_prototype(device=inputs.device)
        feats = model.extract_image_feat(inputs)
        feats = feats / feats.norm(dim=-1, keepdim=True)
        return (feats @ model.text_prototype_embeds / temperature).softmax(1)


def test_clip_scores_prompts_and_crops(tiny_demo, dataset, tiny_clip,
                                       tmp_path):
    config, checkpoint, model = tiny_clip
    classes = list(dataset.metainfo['classes'])
    out = str(tmp_path / 'clip.npz')
    prompts = ['a photo of the digit {}.', 'a picture of {}.']
    assert run(tiny_demo, '--source', 'clip', '--teacher-config', config,
               '--checkpoint', checkpoint, '--prompt', prompts[0],
               '--prompt', prompts[1], '--temperature', '0.05', '--crops',
               '2', '--image-size', '32', '--batch-size', '8', '--out',
               out) == 0
    table = read_teacher_scores(out)
    n = len(dataset)
    assert table['scores'].shape == (n, 10)
    assert table['crop_scores'].shape == (n, 4, 10)
    # softmax over the classes: every image's and crop's scores sum to 1
    np.testing.assert_allclose(table['scores'].sum(1), 1, atol=1e-5)
    np.testing.assert_allclose(table['crop_scores'].sum(2), 1, atol=1e-5)
    meta = table['meta']
    assert meta['prompts'] == prompts and meta['temperature'] == 0.05
    assert meta['crop_grid'] == 2 and meta['image_size'] == 32
    assert meta['checkpoint_sha256'] == __import__(
        'hashlib').sha256(open(checkpoint, 'rb').read()).hexdigest()

    # the scores against CLIPZeroShot's own prototype code, on the image
    # and on its crops cut by hand (48 px image, 2 x 2 grid: 24 px tiles)
    from mmcv.transforms import LoadImageFromFile
    path = osp.join(tiny_demo, dataset_image_paths(dataset)[3])
    img = LoadImageFromFile()(dict(img_path=path))['img']
    assert img.shape[:2] == (48, 48)
    views = [img] + [img[y:y + 24, x:x + 24] for y in (0, 24)
                     for x in (0, 24)]
    # resized as AEVLP's release resizes (torchvision's Resize of a PIL
    # image: Pillow's bilinear)
    views = torch.stack([
        torch.from_numpy(
            np.array(Image.fromarray(v).resize((32, 32), Image.BILINEAR)))
        for v in views
    ]).permute(0, 3, 1, 2).float()
    expected = clip_reference(model, views, classes, prompts, 0.05)
    loaded = load_teacher_scores(out, dataset)
    crops = load_teacher_scores(out, dataset, crops=True)
    torch.testing.assert_close(loaded[3], expected[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(crops[3], expected[1:], atol=1e-5, rtol=1e-4)


def test_crop_grid_drops_the_remainder():
    image = np.arange(7 * 5 * 3, dtype=np.uint8).reshape(7, 5, 3)
    views = whole_and_crops(image, 4, grid=2, interpolation='nearest')
    assert views.shape == (5, 4, 4, 3)
    # 2 x 2 grid of a 5 x 7 image: 2 x 3 px tiles row by row, the last
    # column and row in none
    tiles = [image[0:3, 0:2], image[0:3, 2:4], image[3:6, 0:2],
             image[3:6, 2:4]]
    for view, tile in zip(views[1:], tiles):
        np.testing.assert_array_equal(
            view,
            mmcv.imresize(tile, (4, 4), interpolation='nearest',
                          backend='pillow'))


@pytest.mark.slow
def test_cache_reused_and_stale_cache_refused(tiny_demo, dataset, tiny_clip,
                                              tmp_path, capsys):
    config, checkpoint, _ = tiny_clip
    out = str(tmp_path / 'clip.npz')
    args = ['--source', 'clip', '--teacher-config', config, '--checkpoint',
            checkpoint, '--image-size', '32', '--out', out]
    assert run(tiny_demo, *args) == 0
    written = open(out, 'rb').read()
    capsys.readouterr()
    assert run(tiny_demo, *args) == 0
    assert 'holds these scores already' in capsys.readouterr().out
    assert open(out, 'rb').read() == written  # reused, not rewritten
    # another prompt: another teacher
    assert run(tiny_demo, *args, '--prompt', 'a picture of {}.') == 1
    err = capsys.readouterr().err
    assert err.startswith(f'error: {out} exists and was made for something '
                          "else: prompts: ['a photo of a {}.'] -> "
                          "['a picture of {}.']. Pass --overwrite")
    # a subset of its images (a larger validation share): reused
    assert run(tiny_demo, *args,
               options=['train_dataloader.dataset.val_frac=0.5']) == 0
    assert 'holds these scores already for these 80 of its 128 images' in \
        capsys.readouterr().out
    # another dataset: the same tool on the demo's test split
    assert run(tiny_demo, *args,
               options=['train_dataloader.dataset.split=test']) == 1
    err = capsys.readouterr().err
    assert err.startswith(f'error: {out} was written for another dataset: ')
    assert '--overwrite' in err
    # another class list
    assert run(tiny_demo, *args, options=[
        'train_dataloader.dataset.classes=[0,1,2,3,4,5,6,7,9,8]'
    ]) == 1
    assert "classes: the same classes in another order (8: '8' -> '9'; " \
        "9: '9' -> '8')" in capsys.readouterr().err
    assert run(tiny_demo, *args, '--prompt', 'a picture of {}.',
               '--overwrite') == 0
    assert read_teacher_scores(out)['meta']['prompts'] == [
        'a picture of {}.'
    ]


@pytest.mark.slow
def test_interrupted_run_resumes(tiny_demo, dataset, tiny_clip, tmp_path,
                                 monkeypatch, capsys):
    config, checkpoint, _ = tiny_clip
    args = ['--source', 'clip', '--teacher-config', config, '--checkpoint',
            checkpoint, '--image-size', '32', '--crops', '2',
            '--batch-size', '16', '--save-every', '32']
    fresh = str(tmp_path / 'fresh.npz')
    assert run(tiny_demo, *args, '--out', fresh) == 0
    out = str(tmp_path / 'resumed.npz')
    calls = []
    score = CLIPTeacher.score

    def failing(self, inputs):
        calls.append(len(inputs))
        if len(calls) == 5:
            raise KeyboardInterrupt
        return score(self, inputs)

    monkeypatch.setattr(CLIPTeacher, 'score', failing)
    with pytest.raises(KeyboardInterrupt):
        run(tiny_demo, *args, '--out', out)
    # four batches of 16 were scored: the partial file holds all of them
    with np.load(out + '.partial.npz') as partial:
        assert partial['scores'].shape == (64, 10)
        assert partial['crop_scores'].shape == (64, 4, 10)
    assert not osp.exists(out)
    calls.clear()
    monkeypatch.setattr(CLIPTeacher, 'score', score)
    seen = []
    monkeypatch.setattr(
        CLIPTeacher, 'score',
        lambda self, inputs: seen.append(len(inputs)) or score(self, inputs))
    capsys.readouterr()
    assert run(tiny_demo, *args, '--out', out) == 0
    assert f'resuming from {out}.partial.npz: 64 of {len(dataset)} images ' \
        'scored' in capsys.readouterr().out
    # only the remaining images were scored (each with its 4 crops)
    assert sum(seen) == (len(dataset) - 64) * 5
    assert not osp.exists(out + '.partial.npz')
    a, b = read_teacher_scores(fresh), read_teacher_scores(out)
    np.testing.assert_allclose(a['scores'], b['scores'], atol=1e-6)
    np.testing.assert_allclose(a['crop_scores'], b['crop_scores'], atol=1e-6)


def test_partial_of_another_run_refused(tiny_demo, tiny_clip, tmp_path,
                                        monkeypatch, capsys):
    config, checkpoint, _ = tiny_clip
    out = str(tmp_path / 'clip.npz')
    args = ['--source', 'clip', '--teacher-config', config, '--checkpoint',
            checkpoint, '--image-size', '32', '--batch-size', '16',
            '--out', out]
    score = CLIPTeacher.score
    calls = []

    def failing(self, inputs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return score(self, inputs)

    monkeypatch.setattr(CLIPTeacher, 'score', failing)
    with pytest.raises(KeyboardInterrupt):
        run(tiny_demo, *args, '--save-every', '16')
    monkeypatch.setattr(CLIPTeacher, 'score', score)
    assert run(tiny_demo, *args, '--temperature', '0.1') == 1
    assert capsys.readouterr().err.strip().endswith(
        'holds the partial scores of another run (temperature: 0.01 -> 0.1)'
        '; delete it to start this run afresh.')


def test_ram_is_not_yet_available(tiny_demo, capsys):
    assert run(tiny_demo, '--source', 'ram') == 1
    assert 'error: --source ram is not available yet' in \
        capsys.readouterr().err


def test_teacher_scorer_api(dataset, tiny_clip):
    """The Python API a hook calls: images in, (B, C) scores out."""
    _, _, model = tiny_clip
    classes = list(dataset.metainfo['classes'])
    teacher = CLIPTeacher(model, classes, image_size=32)
    images = torch.rand(3, 3, 32, 32) * 255
    scores = teacher.score(images)
    assert scores.shape == (3, 10)
    torch.testing.assert_close(
        scores, clip_reference(model, images, classes, ['a photo of a {}.'],
                               0.01))
    with pytest.raises(ValueError, match='each prompt needs one {}'):
        CLIPTeacher(model, classes, prompts=['a photo'])


def test_out_defaults_to_the_config_bank_file(tiny_demo, dataset, tmp_path,
                                              capsys):
    """One scoring command writes the file the training config reads; a
    DAMP config is refused scores without crops before any scoring."""
    paths = dataset_image_paths(dataset)
    npz = str(tmp_path / 'mine.npz')
    np.savez(npz, scores=np.full((len(paths), 10), 0.25),
             img_paths=np.array(paths))
    bank_file = str(tmp_path / 'teacher_scores' / 'clip_crops.npz')
    bank = [f'model.head.label_bank.score_file={bank_file}',
            'model.head.label_bank.type=DAMPLabelBank']
    assert run(tiny_demo, '--source', 'file', '--scores', npz,
               options=bank) == 0
    assert load_teacher_scores(bank_file, dataset).shape == (len(paths), 10)
    assert run(tiny_demo, '--source', 'clip', '--checkpoint', npz,
               options=bank) == 1
    assert capsys.readouterr().err.strip() == (
        f'error: {CONFIG} trains with DAMP, which reads crop scores; pass '
        "--crops 4 (AEVLP's grid; 5 for CUB)")


def test_file_npy_with_paths_and_ambiguous_names(tiny_demo, dataset,
                                                  tmp_path, capsys):
    paths = dataset_image_paths(dataset)
    scores = np.random.RandomState(1).rand(len(paths), 10)
    npy, keys = str(tmp_path / 'mine.npy'), str(tmp_path / 'paths.txt')
    np.save(npy, scores)
    out = str(tmp_path / 't.npz')
    assert run(tiny_demo, '--source', 'file', '--scores', npy, '--out',
               out) == 1
    assert 'a .npy holds no image paths; pass them with --img-paths' in \
        capsys.readouterr().err
    with open(keys, 'w') as f:
        f.write('\n'.join(paths))
    assert run(tiny_demo, '--source', 'file', '--scores', npy, '--img-paths',
               keys, '--out', out) == 0
    np.testing.assert_allclose(load_teacher_scores(out, dataset).numpy(),
                               scores, atol=1e-7)
    assert read_teacher_scores(out)['meta']['class_names_from'] == \
        'dataset order'
    # a trailing part that names two images is refused
    match_rows = load_tool().match_rows
    with pytest.raises(ValueError,
                       match=re.escape("mine: 1 image paths name several "
                                       "images of the dataset: 'x.png' (2 "
                                       "images); give longer paths")):
        match_rows(['x.png', 'a/x.png'], ['a/x.png', 'b/x.png'], '.', 'mine')
    rows, dropped = match_rows(['b/x.png', '/elsewhere/y.png', 'a/x.png'],
                               ['a/x.png', 'b/x.png'], '/data', 'mine')
    assert rows.tolist() == [2, 0] and dropped == 1


def test_model_without_class_names(dataset, tmp_path):
    classes = list(dataset.metainfo['classes'])
    config, checkpoint, _ = write_classifier(tmp_path, 'LinearClsHead', 10)
    teacher = build_teacher('model', config, checkpoint, classes, 48)
    assert teacher.class_names_from == 'dataset order (no names in ' \
        'checkpoint)'
    assert teacher.activation == 'softmax'
    config, checkpoint, _ = write_classifier(tmp_path, 'LinearClsHead', 12)
    with pytest.raises(ValueError,
                       match='the teacher has 12 classes and no class names'):
        build_teacher('model', config, checkpoint, classes, 48)


TINY_LINEAR = """
model = dict(
    type='ImageClassifier',
    data_preprocessor=dict(type='ClsDataPreprocessor'),
    backbone=dict(type='PrecomputedFeatures', feature_dim=16),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(type='MultiLabelLinearClsHead', num_classes=10,
              in_channels=16))
"""


@pytest.mark.slow
def test_model_of_cached_features(tiny_demo, dataset, tmp_path, capsys):
    """A teacher of the linear regime scores the images' cached features."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    init_default_scope('mmpretrain')
    paths = [dataset.get_data_info(i)['img_path'] for i in range(len(dataset))]
    rng = np.random.RandomState(0)
    features = rng.randn(len(paths), 16).astype(np.float16)
    cache = str(tmp_path / 'features.npz')
    np.savez(cache, images=np.array(paths[::-1]), features=features[::-1],
             features_flipped=features[::-1])
    config = tmp_path / 'linear.py'
    config.write_text(TINY_LINEAR)
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(str(config)).model)
    model.init_weights()
    checkpoint = str(tmp_path / 'linear.pth')
    classes = list(dataset.metainfo['classes'])
    torch.save(dict(state_dict=model.state_dict(),
                    meta=dict(dataset_meta=dict(classes=classes))),
               checkpoint)
    out = str(tmp_path / 'linear_scores.npz')
    args = ['--source', 'model', '--teacher-config', str(config),
            '--checkpoint', checkpoint, '--out', out]
    assert run(tiny_demo, *args) == 1
    assert 'scores cached features; no cache of the images found (None)' in \
        capsys.readouterr().err
    assert run(tiny_demo, *args, '--feature-cache', cache) == 0
    head = model.head.fc
    expected = torch.sigmoid(
        torch.from_numpy(features.astype(np.float32)) @ head.weight.t() +
        head.bias)
    torch.testing.assert_close(load_teacher_scores(out, dataset), expected,
                               atol=1e-5, rtol=1e-4)
    meta = read_teacher_scores(out)['meta']
    assert meta['feature_cache'] == cache and meta['image_size'] is None
    capsys.readouterr()
    assert run(tiny_demo, *args, '--feature-cache', cache) == 0
    assert 'reusing it' in capsys.readouterr().out
    assert run(tiny_demo, *args, '--feature-cache', cache, '--crops', '2',
               '--overwrite') == 1
    assert 'a teacher of cached features scores whole images only' in \
        capsys.readouterr().err


@pytest.mark.slow
def test_clip_with_a_transformers_tokenizer(tiny_demo, dataset, tmp_path):
    """Where MMPretrain's multimodal models are installed (transformers 4):
    the zoo's tokenizer path, AutoTokenizer of a local CLIPTokenizer (a
    byte-level vocab without merges but two, written here)."""
    pytest.importorskip('transformers')
    from mmpretrain.utils.dependency import WITH_MULTIMODAL
    if not WITH_MULTIMODAL:
        pytest.skip("MMPretrain's multimodal models are not installed")
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    from transformers.models.clip.tokenization_clip import bytes_to_unicode
    chars = list(bytes_to_unicode().values())
    vocab = chars + [c + '</w>' for c in chars] + [
        'ph', 'pho</w>', '<|startoftext|>', '<|endoftext|>'
    ]
    folder = tmp_path / 'tokenizer'
    folder.mkdir()
    (folder / 'vocab.json').write_text(
        json.dumps({t: i for i, t in enumerate(vocab)}))
    (folder / 'merges.txt').write_text('#version: 0.2\np h\nph o</w>\n')
    (folder / 'tokenizer_config.json').write_text(json.dumps(dict(
        tokenizer_class='CLIPTokenizer', unk_token='<|endoftext|>',
        bos_token='<|startoftext|>', eos_token='<|endoftext|>',
        pad_token='<|endoftext|>', model_max_length=16)))
    config = tmp_path / 'clip.py'
    config.write_text(TINY_CLIP.replace(
        "tokenizer=dict(type='TinyWordTokenizer', vocab_file='{vocab}')",
        f"tokenizer=dict(type='AutoTokenizer', name_or_path='{folder}', "
        'use_fast=False)').format(vocab_size=len(vocab)))
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(str(config)).model)
    checkpoint = str(tmp_path / 'clip.pth')
    torch.save(dict(state_dict=model.state_dict(), meta={}), checkpoint)
    out = str(tmp_path / 'scores.npz')
    assert run(tiny_demo, '--source', 'clip', '--teacher-config',
               str(config), '--checkpoint', checkpoint, '--image-size', '32',
               '--out', out) == 0
    scores = load_teacher_scores(out, dataset)
    assert scores.shape == (len(dataset), 10)
    torch.testing.assert_close(scores.sum(1), torch.ones(len(dataset)))


def score_teacher(tiny_demo, *args, env=None):
    """``tools/score_teacher.py`` of the VLPL demo config on ``tiny_demo``
    in a process: its exit status and output."""
    proc = subprocess.run(
        [PYTHON, 'tools/score_teacher.py', VLPL_CONFIG, *args,
         '--cfg-options', f'train_dataloader.dataset.data_root={tiny_demo}'],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_documented_clip_command_loads_the_zoo_config(tiny_demo,
                                                          tmp_path):
    """``--source clip --checkpoint CKPT`` reads MMPretrain's zoo config
    (``mmpretrain::``) and stops at once, before any download, at what this
    machine lacks: the multimodal packages, or (offline) the tokenizer."""
    from mmpretrain.utils.dependency import WITH_MULTIMODAL
    checkpoint = tmp_path / 'clip.pth'
    checkpoint.write_bytes(b'weights')
    rc, out = score_teacher(
        tiny_demo, '--source', 'clip', '--checkpoint', str(checkpoint),
        '--out', str(tmp_path / 'clip.npz'),
        env=dict(HF_HUB_OFFLINE='1', HF_HOME=str(tmp_path / 'hf')))
    assert rc == 1 and 'Traceback' not in out, out
    assert 'No such file or directory' not in out
    if WITH_MULTIMODAL:
        assert "error: the tokenizer 'openai/clip-vit-base-patch16' " \
            '(model.tokenizer.name_or_path of the teacher config) is not in ' \
            'the Hugging Face cache' in out
        assert 'and HF_HUB_OFFLINE is set' in out
        assert '--teacher-options model.tokenizer.name_or_path=FOLDER' in out
    else:
        assert 'error: --source clip: CLIPZeroShot is not available: ' \
            "MMPretrain 1.2's multimodal models (CLIPZeroShot, RAM) need pip " \
            "install 'transformers>=4.28,<4.52'" in out


@pytest.mark.slow
def test_a_text_file_named_npz_is_not_an_npz(tiny_demo, tmp_path):
    scores = tmp_path / 'mine.npz'
    scores.write_text('image,0,1\nimages/train/train_00000.png,0.1,0.9\n')
    rc, out = score_teacher(tiny_demo, '--source', 'file', '--scores',
                            str(scores), '--out', str(tmp_path / 'out.npz'))
    assert rc == 1
    assert f"error: {scores} is not an .npz file (a zip archive): it " \
        "starts with b'image,0,1\\nimages'; --scores takes an .npz, .npy " \
        'or .csv (a table of text is a .csv)' in out
    assert 'pickled' not in out
