"""apply_decision: the one function that turns scores into label sets
(issue 55), on tensors and arrays alike."""
import numpy as np
import torch

from spml_mm.models.heads import apply_decision


def test_each_kind_of_decision():
    scores = torch.tensor([[0.9, 0.2, 0.6], [0.1, 0.4, 0.3]])
    expect = {
        'thresholds': ([0.95, 0.2, 0.3], [[0, 1, 1], [0, 1, 1]]),
        'thr': (0.35, [[1, 0, 1], [0, 1, 0]]),
        'topk': (1, [[1, 0, 0], [0, 1, 0]]),
    }
    for key, (value, labels) in expect.items():
        found = apply_decision(scores, {key: value})
        assert found.dtype == torch.bool
        assert found.int().tolist() == labels, key
        array = apply_decision(scores.double().numpy(), {key: value})
        assert isinstance(array, np.ndarray)
        assert array.astype(int).tolist() == labels, key
    # a head's options: per-class thresholds replace thr, thr wins over topk
    assert apply_decision(scores, dict(thr=0.5, topk=None,
                                       thresholds=[0.95, 0.2, 0.3])
                          ).int().tolist() == expect['thresholds'][1]
    assert apply_decision(scores, dict(thr=0.35, topk=2)).int().tolist() \
        == expect['thr'][1]
    assert apply_decision(scores, None).int().tolist() == [[1, 0, 1],
                                                         [0, 0, 0]]
