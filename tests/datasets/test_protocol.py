import numpy as np
import pytest

from spml_mm.datasets import observe_uniform, split_train_val


def reference_observe(labels, seed, num_pos=1, num_neg=0):
    """The released protocol spelled out call by call on one RandomState."""
    rng = np.random.RandomState(seed)
    out = np.zeros(labels.shape, dtype=int)
    for i, row in enumerate(labels):
        pos = list(np.flatnonzero(row == 1))
        order = np.array(pos)
        rng.shuffle(order)
        out[i, order[:num_pos]] = 1
        neg = np.array(np.flatnonzero(row == 0))
        rng.shuffle(neg)
        out[i, neg[:num_neg]] = -1
    return out


def test_single_positive_rows_keep_their_positive():
    labels = np.eye(4, dtype=int)[[2, 0, 3, 1]]
    np.testing.assert_array_equal(observe_uniform(labels), labels)


def test_recoding_and_dtype():
    labels = np.array([[0., 1., 0.], [1., 0., 0.]])
    obs = observe_uniform(labels)
    assert obs.dtype == labels.dtype
    # one +1 per row, everything else unobserved (0, not -1)
    np.testing.assert_array_equal(obs, [[0, 1, 0], [1, 0, 0]])


def test_several_positives_match_the_rng_sequence():
    labels = np.array([[1, 1, 0, 1, 0],
                       [0, 1, 1, 1, 1],
                       [1, 0, 0, 0, 1],
                       [1, 1, 1, 1, 1]])
    obs = observe_uniform(labels, seed=1200)
    np.testing.assert_array_equal(obs, reference_observe(labels, 1200))
    assert (obs.sum(1) == 1).all()
    assert (labels[obs == 1] == 1).all()


def test_hand_worked_first_row():
    # row 0 has positives [0, 1, 3]: the first shuffle of RandomState(1200)
    # decides which one is kept.
    labels = np.array([[1, 1, 0, 1, 0]])
    order = np.array([0, 1, 3])
    np.random.RandomState(1200).shuffle(order)
    expected = np.zeros((1, 5), dtype=int)
    expected[0, order[0]] = 1
    np.testing.assert_array_equal(observe_uniform(labels), expected)


def test_negative_shuffle_consumes_random_numbers():
    labels = np.array([[1, 0, 0, 0, 0, 1], [1, 1, 1, 1, 0, 0]] * 4)
    obs = observe_uniform(labels, seed=7)

    # the same protocol without the negatives' shuffle diverges
    rng = np.random.RandomState(7)
    skipped = np.zeros_like(labels)
    for i, row in enumerate(labels):
        pos = np.flatnonzero(row == 1)
        rng.shuffle(pos)
        skipped[i, pos[0]] = 1
    assert not np.array_equal(obs, skipped)
    np.testing.assert_array_equal(obs, reference_observe(labels, 7))


def test_observed_negatives():
    labels = np.array([[1, 0, 0, 1], [0, 1, 0, 0]])
    obs = observe_uniform(labels, num_pos=1, num_neg=2, seed=3)
    np.testing.assert_array_equal(
        obs, reference_observe(labels, 3, num_pos=1, num_neg=2))
    assert ((obs == -1).sum(1) == 2).all()
    assert (labels[obs == -1] == 0).all()


def test_minus_one_keeps_every_label_after_the_same_shuffles():
    rng = np.random.RandomState(0)
    labels = (rng.rand(30, 6) < 0.4).astype(int)
    labels[np.arange(30), rng.randint(0, 6, 30)] = 1
    signed = 2 * labels - 1
    # all positives and all negatives: the full labels, -1/+1
    np.testing.assert_array_equal(
        observe_uniform(labels, num_pos=-1, num_neg=-1), signed)
    every_pos = observe_uniform(labels, num_pos=-1, num_neg=2, seed=5)
    assert (every_pos == 1).sum() == labels.sum()
    # the negatives drawn are those of (num_pos=1, num_neg=2): the
    # positives' shuffle consumes the same random numbers whatever is kept
    one_pos = observe_uniform(labels, num_pos=1, num_neg=2, seed=5)
    np.testing.assert_array_equal(every_pos == -1, one_pos == -1)
    np.testing.assert_array_equal(
        observe_uniform(labels, num_pos=2, num_neg=-1, seed=5) == -1,
        labels == 0)
    # single positive: the protocol's matrix, unchanged
    np.testing.assert_array_equal(observe_uniform(labels),
                                  reference_observe(labels, 1200))


@pytest.mark.parametrize('kwargs', [
    dict(num_pos=0), dict(num_pos=-2), dict(num_neg=-3), dict(num_pos=1.5)
])
def test_observe_rejects_bad_counts(kwargs):
    with pytest.raises(ValueError, match=r'(num_pos|num_neg) must be an int'):
        observe_uniform(np.eye(3, dtype=int), **kwargs)


def test_observe_rejects_bad_matrices():
    with pytest.raises(ValueError, match='0 and 1'):
        observe_uniform(np.array([[0, 2]]))
    with pytest.raises(ValueError, match='2-D'):
        observe_uniform(np.array([0, 1]))


def test_split_matches_the_protocol():
    train, val = split_train_val(10, val_frac=0.2, seed=1200)
    perm = np.random.RandomState(1200).permutation(10)
    np.testing.assert_array_equal(train, np.sort(perm[:8]))
    np.testing.assert_array_equal(val, np.sort(perm[-2:]))


def test_split_rounding_and_disjointness():
    train, val = split_train_val(5717, 0.2)  # VOC 2012 train split
    assert (len(train), len(val)) == (4574, 1143)  # the papers' statistics
    assert np.intersect1d(train, val).size == 0
    assert np.array_equal(np.union1d(train, val), np.arange(5717))
    train, val = split_train_val(7, 0.)
    assert len(val) == 0 and len(train) == 7
    with pytest.raises(ValueError, match='val_frac'):
        split_train_val(10, 1.)
