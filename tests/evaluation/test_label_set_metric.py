import numpy as np
import pytest
import torch
from mmpretrain.structures import DataSample

from spml_mm.evaluation import SPMLLabelSetMetric


def sample(pred, pos, neg=None):
    s = DataSample().set_pred_score(torch.zeros(3)).set_pred_label(
        torch.tensor(pred, dtype=torch.long)).set_gt_label(pos)
    out = s.to_dict()
    if neg is not None:
        out['gt_label_neg'] = np.array(neg, dtype=np.int64)
    return out


def evaluate(samples, **kwargs):
    metric = SPMLLabelSetMetric(**kwargs)
    metric.dataset_meta = dict(classes=['a', 'b', 'c'])
    metric.process(None, samples)
    return metric.evaluate(len(samples))


def test_hand_computed_full_labels():
    # truth {a, b}, {b}, {c}; predicted {a}, {b, c}, {}
    got = evaluate([sample([0], [0, 1]), sample([1, 2], [1]),
                    sample([], [2])], per_class=True)
    # per class: a P 1/1 R 1/1; b P 1/1 R 1/2; c P 0/1 R 0/1
    cp, cr = 100 * 2 / 3, 100 * 1.5 / 3
    assert got['spml/CP'] == pytest.approx(cp)
    assert got['spml/CR'] == pytest.approx(cr)
    assert got['spml/CF1'] == pytest.approx(2 * cp * cr / (cp + cr))
    # overall: 2 true positives of 3 predicted and 4 true
    assert got['spml/OP'] == pytest.approx(100 * 2 / 3)
    assert got['spml/OR'] == pytest.approx(100 * 2 / 4)
    assert got['spml/OF1'] == pytest.approx(100 * 2 * 2 / (3 + 4))
    assert got['spml/R_b'] == pytest.approx(50)
    assert got['spml/P_c'] == 0
    assert 'spml/recall_observed' not in got


def test_observed_labels_give_recall_only():
    # single observed positives (everything else unknown): 2 of 3 predicted
    got = evaluate([sample([0, 2], [0], []), sample([1], [2], []),
                    sample([1], [1], [])])
    assert got == {'spml/recall_observed': pytest.approx(100 * 2 / 3)}


def test_mixed_rows_split_by_kind():
    got = evaluate([sample([0], [0]), sample([], [1], [])])
    assert got['spml/OR'] == 100 and got['spml/recall_observed'] == 0


def test_score_dump_writes_plain_arrays_in_dataset_order(tmp_path):
    from spml_mm.evaluation import SPMLScoreDump
    out = str(tmp_path / 'sub' / 'scores.npz')
    metric = SPMLScoreDump(out_file=out)
    metric.dataset_meta = dict(classes=['a', 'b', 'c'])
    samples = []
    for idx, pos, score in ((1, [2], [0.1, 0.2, 0.9]),
                            (0, [0], [0.7, 0.3, 0.05])):
        s = DataSample(metainfo=dict(sample_idx=idx)).set_pred_score(
            torch.tensor(score)).set_gt_label(pos).to_dict()
        samples.append(s)
    metric.process(None, samples)
    assert metric.evaluate(2) == {}
    with np.load(out) as found:  # no pickle: allow_pickle stays False
        np.testing.assert_array_equal(found['sample_idx'], [0, 1])
        np.testing.assert_allclose(found['scores'],
                                   [[0.7, 0.3, 0.05], [0.1, 0.2, 0.9]],
                                   atol=1e-7)
        assert found['scores'].dtype == np.float32
        np.testing.assert_array_equal(found['known'],
                                      [[1, -1, -1], [-1, -1, 1]])
        assert list(found['classes']) == ['a', 'b', 'c']
    with pytest.raises(ValueError, match='must end with .npz'):
        SPMLScoreDump(out_file='scores.pkl')
