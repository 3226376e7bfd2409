import pytest
import torch
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import spml_mm  # noqa: F401


def samples(labels):
    return [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label(lab)
        for i, lab in enumerate(labels)
    ]


def test_loss_uses_the_observed_matrix():
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    feats = (torch.randn(2, 3), )
    data = samples([[1], [0, 3]])
    target = torch.tensor([[0., 1., 0., 0.], [1., 0., 0., 1.]])
    torch.testing.assert_close(head.observed_target(data), target)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        head(feats), target)
    torch.testing.assert_close(head.loss(feats, data)['loss'], expected)
    preds = head.predict(feats)
    torch.testing.assert_close(preds[0].pred_score,
                               torch.sigmoid(head(feats))[0])


def test_label_outside_num_classes():
    head = MODELS.build(
        dict(type='SPMLLinearClsHead', num_classes=4, in_channels=3))
    with pytest.raises(ValueError, match=r"sample 1 .*\[4\] outside the "
                       "head's num_classes=4"):
        head.loss((torch.randn(2, 3), ), samples([[1], [4]]))
