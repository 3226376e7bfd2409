"""SPMLDataPreprocessor: ClsDataPreprocessor's results, in one copy of the
images and one of the labels, neither of them blocking."""
import numpy as np
import pytest
import torch
from mmengine.dataset import default_collate, pseudo_collate
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS, TRANSFORMS

import spml_mm  # noqa: F401
from tests.models.data_preprocessors.test_multi_view_data_preprocessor \
    import multi_view_samples
from tests.sync_counting import count_syncs

KWARGS = dict(mean=[1., 2., 3.], std=[2., 4., 8.], to_rgb=True)


def packed(sizes=((6, 5), ) * 4):
    """PackInputs samples with partial labels (gt_label_neg as the
    dataset's index array)."""
    init_default_scope('mmpretrain')
    pack = TRANSFORMS.build(
        dict(type='PackInputs', algorithm_keys=('gt_label_neg', )))
    g = np.random.default_rng(0)
    return [
        pack(dict(img=g.integers(0, 256, (h, w, 3), dtype=np.uint8),
                  gt_label=np.arange(i % 3 + 1),
                  gt_label_neg=np.arange(4, 4 + i % 2)))
        for i, (h, w) in enumerate(sizes)
    ]


def preprocess(name, data, **kwargs):
    return MODELS.build(dict(type=name, **KWARGS, **kwargs))(data, True)


@pytest.mark.parametrize('collate', [pseudo_collate, default_collate])
def test_same_batch_as_mmpretrain(collate):
    ours = preprocess('SPMLDataPreprocessor', collate(packed()))
    stock = preprocess('ClsDataPreprocessor', collate(packed()))
    assert torch.equal(ours['inputs'], stock['inputs'])
    for mine, theirs in zip(ours['data_samples'], stock['data_samples']):
        assert torch.equal(mine.gt_label, theirs.gt_label)
        assert mine.gt_label_neg.tolist() == theirs.gt_label_neg.tolist()
        assert isinstance(mine.gt_label_neg, torch.Tensor)


def test_images_of_several_sizes_are_padded_as_mmpretrain_does():
    sizes = ((6, 5), (4, 7), (6, 5))
    ours = preprocess('SPMLDataPreprocessor', pseudo_collate(packed(sizes)))
    stock = preprocess('ClsDataPreprocessor', pseudo_collate(packed(sizes)))
    assert ours['inputs'].shape == (3, 3, 6, 7)
    assert torch.equal(ours['inputs'], stock['inputs'])


def test_samples_without_labels_pass_as_in_mmpretrain():
    """Inference batches (e.g. tools/cache_features.py) carry no labels."""
    init_default_scope('mmpretrain')
    pack = TRANSFORMS.build(dict(type='PackInputs'))
    data = [pack(dict(img=np.zeros((4, 4, 3), np.uint8))) for _ in range(2)]
    ours = preprocess('SPMLDataPreprocessor', pseudo_collate(data))
    stock = preprocess('ClsDataPreprocessor', pseudo_collate(data))
    assert torch.equal(ours['inputs'], stock['inputs'])
    assert 'gt_label' not in ours['data_samples'][0]


def test_channels_last_keeps_the_values():
    data = pseudo_collate(packed())
    ours = preprocess('SPMLDataPreprocessor', data, channels_last=True)
    stock = preprocess('ClsDataPreprocessor', pseudo_collate(packed()))
    assert ours['inputs'].is_contiguous(memory_format=torch.channels_last)
    assert not ours['inputs'].is_contiguous()
    assert torch.equal(ours['inputs'], stock['inputs'])


def copies(name, data):
    """The events of preprocessing ``data`` for a model on the meta device
    (the stand-in for a GPU)."""
    preprocessor = MODELS.build(dict(type=name, **KWARGS)).to('meta')
    with count_syncs() as counter:
        out = preprocessor(data, True)
    assert out['inputs'].device.type == 'meta'
    assert all(s.gt_label.device.type == 'meta' for s in out['data_samples'])
    return [e.kind for e in counter.events]


def test_one_copy_of_the_images_and_one_of_the_labels():
    """MMPretrain's: one blocking copy per image and one for the labels;
    ours: two non-blocking copies (pinned memory on a GPU)."""
    assert copies('ClsDataPreprocessor', pseudo_collate(packed())) == \
        ['copy'] * 5
    assert copies('SPMLDataPreprocessor', pseudo_collate(packed())) == \
        ['async copy'] * 2


def test_multi_view_batches_move_in_two_copies_too():
    """Three views of three samples: nine images, one copy."""
    assert copies('MultiViewDataPreprocessor',
                  pseudo_collate(multi_view_samples())) == ['async copy'] * 2


def recording():
    """A dynamo backend that records the dtypes of each graph's tensor
    inputs and runs the graph as traced."""
    graphs = []

    def record(graph, example_inputs):
        graphs.append([x.dtype for x in example_inputs
                       if isinstance(x, torch.Tensor)])
        return graph.forward

    torch._dynamo.reset()
    return record, graphs


def test_a_compiled_step_starts_its_graphs_from_the_moved_batch():
    """MMEngine's ``compile`` of ``train_step``: the preprocessor runs
    eagerly, so no graph takes the host's uint8 images (CUDA graphs skip a
    graph fed with host tensors), and the model's take the normalised
    batch."""
    from mmengine.optim import OptimWrapper

    from benchmark.gpu_steps import TINY_BACKBONE
    init_default_scope('mmpretrain')
    model = MODELS.build(dict(
        type='ImageClassifier', backbone=TINY_BACKBONE,
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='MultiLabelLinearClsHead', num_classes=8,
                  in_channels=64),
        data_preprocessor=dict(type='SPMLDataPreprocessor', **KWARGS)))
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    backend, graphs = recording()
    torch.compile(model.train_step, backend=backend)(
        pseudo_collate(packed()), wrapper)
    torch._dynamo.reset()
    assert graphs and not any(torch.uint8 in dtypes for dtypes in graphs)
    assert any(torch.float32 in dtypes for dtypes in graphs)


@pytest.mark.parametrize('name', ['SPMLDataPreprocessor',
                                  'MultiViewDataPreprocessor'])
def test_a_compiled_call_runs_the_preprocessor_eagerly(name):
    init_default_scope('mmpretrain')
    preprocessor = MODELS.build(dict(type=name, **KWARGS))
    samples = multi_view_samples() if name.startswith('Multi') else packed()
    backend, graphs = recording()
    out = torch.compile(preprocessor, backend=backend)(
        pseudo_collate(samples), True)
    torch._dynamo.reset()
    assert graphs == []
    assert torch.equal(out['inputs'],
                       preprocessor(pseudo_collate(samples), True)['inputs'])


def test_device_flip_mirrors_each_image_with_its_probability():
    """flip_prob: in training each image is the normalised image or its
    mirror, mirrored in about flip_prob of the images (the loader's
    RandomFlip draws the same); at evaluation, and at 0, none is."""
    torch.manual_seed(0)
    data = default_collate(packed(((6, 5), ) * 2000))
    stock = preprocess('ClsDataPreprocessor', data)['inputs']
    flipper = MODELS.build(dict(type='SPMLDataPreprocessor', **KWARGS,
                                flip_prob=0.3))
    out = flipper(data, True)['inputs']
    same = (out == stock).flatten(1).all(1)
    mirrored = (out == stock.flip(-1)).flatten(1).all(1)
    assert bool((same | mirrored).all())
    # 600 expected of 2000: 3 standard deviations are 61
    assert abs(int(mirrored.sum()) - 600) < 61
    evaluated = MODELS.build(dict(type='ClsDataPreprocessor', **KWARGS))(
        data, False)['inputs']
    assert torch.equal(flipper(data, False)['inputs'], evaluated)
    unflipped = MODELS.build(dict(type='SPMLDataPreprocessor', **KWARGS))
    assert torch.equal(unflipped(data, True)['inputs'], stock)


def test_device_flip_refuses_images_of_several_shapes():
    flipper = MODELS.build(dict(type='SPMLDataPreprocessor', **KWARGS,
                                flip_prob=0.5))
    data = pseudo_collate(packed(((6, 5), (4, 7))))
    with pytest.raises(ValueError, match='this batch\'s images differ in '
                       'shape: resize them to one size'):
        flipper(data, True)
    with pytest.raises(ValueError, match=r'flip_prob must be in \[0, 1\]'):
        MODELS.build(dict(type='SPMLDataPreprocessor', flip_prob=1.5))
