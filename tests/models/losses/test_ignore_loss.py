"""IGNORE: the loss against a direct transcription of its formula (boolean
indexing and means over the selected entries, as the release writes it), its
gradient, the running thresholds over steps and through a state dict, the
CAM mask against a per-pixel loop, and the classifier's three passes."""
import copy

import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401  (registers the plugin)
from spml_mm.models.classifiers import cam_mask, positive_cam
from spml_mm.models.losses import IGNORELoss, ignore_loss, ignore_rejection

B, C = 6, 7


def batch(seed=0, scale=2., dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(B, C, generator=g, dtype=dtype) * scale
    zs = z + torch.randn(B, C, generator=g, dtype=dtype)
    zm = z - torch.rand(B, C, generator=g, dtype=dtype) * 3
    s = torch.zeros(B, C, dtype=dtype)
    s[torch.arange(B), torch.randint(C, (B, ), generator=g)] = 1
    return z, zs, zm, s


def reference(z, zs, s, reject, spbc_w, ign_w, reg_w):
    """The objective written entry by entry with boolean indexing."""
    p, ps = torch.sigmoid(z), torch.sigmoid(zs)
    spbc = -torch.log(p[s == 1]).mean()
    an = torch.where(s == 1, -torch.log(ps), -torch.log(1 - ps))
    kept = an[(1 - reject).bool()].mean()
    return spbc_w * spbc + ign_w * kept + reg_w * ((zs - z)**2).mean()


def test_value_matches_the_formula():
    z, zs, zm, s = batch()
    gap_thr, avg_thr = torch.tensor(1.), z.mean(0)
    reject = ignore_rejection(z, zm, s, gap_thr, avg_thr)
    # rejected: unobserved, gap above 1 and logit above its class mean
    expected = (((z - zm).abs() > 1) & (z > avg_thr) & (s == 0)).double()
    assert torch.equal(reject, expected) and reject.sum() > 0
    ours = ignore_loss(z, zs, s, reject, 0.1, 1., 0.5)
    torch.testing.assert_close(
        ours, reference(z, zs, s, reject, 0.1, 1., 0.5), rtol=1e-12,
        atol=1e-12)
    # without lat, the gap alone; switches off: plain AN on the image
    no_lat = ignore_rejection(z, zm, s, gap_thr, avg_thr, lat=False)
    assert torch.equal(no_lat, (((z - zm).abs() > 1) & (s == 0)).double())
    plain = ignore_loss(z, zs, s, reject, 0., 1., 0.5, strong_aug=False,
                        ignore=False, reg=False)
    torch.testing.assert_close(
        plain, F.binary_cross_entropy_with_logits(z, s), rtol=1e-12,
        atol=1e-12)


def test_gradient():
    z, zs, zm, s = batch(1)
    reject = ignore_rejection(z, zm, s, torch.tensor(1.), z.mean(0))
    grads = []
    for fn in (ignore_loss, reference):
        a, b = z.clone().requires_grad_(), zs.clone().requires_grad_()
        fn(a, b, s, reject, 0.1, 1., 0.5).backward()
        grads.append((a.grad, b.grad))
    for ours, theirs in zip(*grads):
        torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_eps_is_the_releases_log():
    z, zs, zm, s = batch(2, scale=12.)
    reject = torch.zeros_like(z)
    exact = ignore_loss(z, zs, s, reject, eps=0.)
    eps = ignore_loss(z, zs, s, reject, eps=1e-5)
    p, ps = torch.sigmoid(z), torch.sigmoid(zs)
    an = torch.where(s == 1, -torch.log(ps + 1e-5),
                     -torch.log(1 - ps + 1e-5))
    released = 0.5 * -torch.log(p[s == 1] + 1e-5).mean() + an.mean() \
        + 0.5 * ((zs - z)**2).mean()
    torch.testing.assert_close(eps, released, rtol=1e-12, atol=1e-12)
    assert torch.isfinite(exact)


def test_thresholds_move_as_emas_and_survive_a_state_dict():
    loss = IGNORELoss(num_classes=C, gap_lambda=0.9, avg_lambda=0.8,
                      warm_up=1).double()
    gap, avg = 0., torch.zeros(C, dtype=torch.float64)
    for step in range(4):
        z, zs, zm, s = batch(10 + step)
        loss.set_epoch(0 if step < 2 else 1, 3)
        value = loss(z, s, mask_logits=zm, strong_logits=zs)
        gap = 0.9 * gap + 0.1 * (z - zm).abs()[s == 1].mean()
        avg = 0.8 * avg + 0.2 * z.mean(0)
        torch.testing.assert_close(loss.gap_threshold, torch.as_tensor(gap))
        torch.testing.assert_close(loss.avg_threshold, avg)
        reject = torch.zeros_like(z) if step < 2 else ignore_rejection(
            z, zm, s, gap, avg)
        torch.testing.assert_close(
            value, ignore_loss(z, zs, s, reject, 0.5, 1., 0.5))
    state = loss.state_dict()
    assert set(state) == {'gap_threshold', 'avg_threshold'}
    restored = IGNORELoss(num_classes=C).double()
    restored.load_state_dict(copy.deepcopy(state))
    assert torch.equal(restored.avg_threshold, loss.avg_threshold)


def test_observed_negatives_are_never_rejected_and_the_epoch_is_needed():
    z, zs, zm, s = batch(3)
    loss = IGNORELoss(num_classes=C, warm_up=0).double()
    with pytest.raises(RuntimeError, match='SPMLEpochHook'):
        loss(z, s, mask_logits=zm, strong_logits=zs)
    loss.set_epoch(0, 2)
    negative = torch.ones(B, C, dtype=torch.bool) & (s == 0)
    all_negative = loss(z, s, mask_logits=zm, strong_logits=zs,
                        observed_negative=negative)
    plain = ignore_loss(z, zs, s, torch.zeros_like(z))
    torch.testing.assert_close(all_negative, plain)
    with pytest.raises(ValueError, match='IGNOREClassifier'):
        loss(z, s)
    with pytest.raises(ValueError, match='num_classes'):
        IGNORELoss(num_classes=0)


def loop_mask(cam, target, size, threshold):
    """The release's steps, one image and one pixel at a time."""
    single = [int(i) for i in range(len(cam)) if target[i].sum() == 1]
    sel = torch.stack([cam[i] for i in single])
    low = torch.empty(cam.shape[1:], dtype=cam.dtype)
    high = torch.empty(cam.shape[1:], dtype=cam.dtype)
    for y in range(cam.shape[1]):
        for x in range(cam.shape[2]):
            low[y, x] = min(sel[:, y, x])
            high[y, x] = max(sel[:, y, x])
    scaled = F.interpolate(((sel - low) / high)[:, None], size=size,
                           mode='bilinear', align_corners=False)
    mask = torch.ones(len(cam), 1, *size, dtype=cam.dtype)
    for row, i in enumerate(single):
        mask[i] = (scaled[row] > threshold).to(cam.dtype)
    return mask


def test_cam_mask_is_the_releases_batch_scaling():
    g = torch.Generator().manual_seed(4)
    fmap = torch.randn(B, 5, 3, 4, generator=g, dtype=torch.float64)
    weight = torch.randn(C, 5, generator=g, dtype=torch.float64)
    bias = torch.randn(C, generator=g, dtype=torch.float64)
    _, _, _, s = batch(4)
    s[2] = 0
    s[2, :2] = 1  # two positives: the image is kept whole
    cam = positive_cam(fmap, weight, bias, s)
    k = s[0].argmax()
    torch.testing.assert_close(
        cam[0], torch.einsum('dhw,d->hw', fmap[0], weight[k]) + bias[k])
    mask = cam_mask(cam, s, (12, 16), 0.8)
    assert torch.equal(mask, loop_mask(cam, s, (12, 16), 0.8))
    assert mask[2].all() and 0 < mask.mean() < 1
    per_image = cam_mask(cam, s, (12, 16), 0.5, norm='image')
    assert per_image.shape == (B, 1, 12, 16)
    assert all(per_image[i].any() for i in range(B))


def demo_model(**model):
    init_default_scope('mmpretrain')
    cfg = dict(
        type='IGNOREClassifier',
        backbone=dict(type='ResNet', depth=18, stem_channels=8,
                      base_channels=8, out_indices=(3, )),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='SPMLLinearClsHead', num_classes=C, in_channels=64,
                  loss=dict(type='IGNORELoss', warm_up=0)),
        data_preprocessor=dict(type='MultiViewDataPreprocessor'))
    cfg.update(model)
    return MODELS.build(cfg)


def two_view_batch(views=2):
    g = torch.Generator().manual_seed(5)
    samples = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label([i % C])
        for i in range(4)
    ]
    inputs = [[torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8,
                             generator=g) for _ in samples]
              for _ in range(views)]
    return dict(inputs=inputs, data_samples=samples)


def test_classifier_runs_three_passes_and_keeps_its_state():
    model = demo_model().train()
    model.head.loss_module.set_epoch(1, 2)
    calls = []
    model.backbone.register_forward_hook(
        lambda m, i, o: calls.append(torch.is_grad_enabled()))
    from mmengine.optim import OptimWrapper
    wrapper = OptimWrapper(torch.optim.Adam(model.parameters(), 1e-3))
    losses = model.train_step(two_view_batch(), wrapper)
    assert torch.isfinite(losses['loss'])
    # image and strong view with gradient, the masked image without
    assert calls == [True, True, False]
    assert model.head.loss_module.gap_threshold > 0
    keys = model.state_dict()
    assert 'head.loss_module.gap_threshold' in keys
    assert keys['head.loss_module.avg_threshold'].shape == (C, )
    with pytest.raises(ValueError, match='2 views'):
        model.train_step(two_view_batch(3), wrapper)
    # inference is the plain classifier's
    model.eval()
    out = model.val_step(dict(inputs=two_view_batch()['inputs'][0],
                              data_samples=two_view_batch()['data_samples']))
    assert out[0].pred_score.shape == (C, )


def test_classifier_refuses_what_gives_no_cam():
    with pytest.raises(ValueError, match='GlobalAveragePooling'):
        demo_model(neck=None)
    with pytest.raises(ValueError, match='IGNORELoss'):
        demo_model(head=dict(type='SPMLLinearClsHead', num_classes=C,
                             in_channels=64, loss=dict(type='ANLoss')))
    with pytest.raises(ValueError, match='cam_norm'):
        demo_model(cam_norm='pixel')
    # a backbone whose last output is pooled (ConvNeXt with
    # gap_before_final_norm=True, a ViT's class token): refused at the step
    model = demo_model()
    model.backbone.forward = lambda x: (x.new_zeros(len(x), 64), )
    model.head.loss_module.set_epoch(0, 1)
    from mmengine.optim import OptimWrapper
    wrapper = OptimWrapper(torch.optim.Adam(model.parameters(), 1e-3))
    with pytest.raises(ValueError, match='gap_before_final_norm=False'):
        model.train_step(two_view_batch(), wrapper)
