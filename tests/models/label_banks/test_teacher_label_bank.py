import pytest
import torch

from spml_mm.models.label_banks import DAMPLabelBank, TeacherLabelBank


def test_threshold_top_k_and_negatives():
    bank = TeacherLabelBank(5, 'teacher.npz', threshold=0.3, top_k=2,
                            negative_fraction=0.4, num_samples=2)
    bank.teacher_score.copy_(
        torch.tensor([[0.5, 0.3, 0.35, 0.05, 0.0],
                      [0.1, 0.2, 0.29, 0.25, 0.16]]))
    target = torch.zeros(2, 5)
    states = bank.entries(torch.tensor([1, 0]), target)['pseudo_label']
    # row 1: nothing reaches 0.3; the 2 lowest become negatives
    # row 0: 0.5, 0.35 (top 2 of the three >= 0.3), negatives 0.0, 0.05
    assert states.dtype == torch.int8
    assert states.tolist() == [[-1, 0, 0, 0, -1], [1, 0, 1, -1, -1]]
    without_limit = TeacherLabelBank(5, 'teacher.npz', threshold=0.3,
                                     num_samples=2)
    without_limit.teacher_score.copy_(bank.teacher_score)
    assert without_limit.entries(torch.tensor([0]), target[:1])[
        'pseudo_label'].tolist() == [[1, 1, 1, 0, 0]]


def test_damp_combines_whole_image_and_crops():
    bank = DAMPLabelBank(4, 'teacher.npz', eta=0.3, threshold=0.4, top_k=2,
                         negative_fraction=0.25, negative_pseudo_labels=True,
                         num_samples=1)
    bank.teacher_score.copy_(torch.tensor([[0.2, 0.5, 0.1, 0.2]]))
    crops = torch.tensor([[[0.1, 0.7, 0.0, 0.2], [0.5, 0.1, 0.2, 0.2],
                           [0.2, 0.4, 0.1, 0.3]]])
    bank.crop_max.copy_(crops.amax(1))
    bank.crop_min.copy_(crops.amin(1))
    bank.crop_mean.copy_(crops.mean(1))
    # observed positive: class 0, s_g = 0.2, so eta_i = min(0.2, 0.3) = 0.2
    target = torch.tensor([[1., 0., 0., 0.]])
    # crop max > 0.2 for classes 0, 1, 3 (0.5, 0.7, 0.3); class 2's is 0.2
    # s_final = (s_g + [0.5, 0.7, 0.0, 0.3]) / 2 = [.35, .6, .05, .25]
    # negatives: lowest (s_g + mean) / 2 = class 2
    positive, negative = bank.scores(torch.tensor([0]), target)
    torch.testing.assert_close(positive,
                               torch.tensor([[0.35, 0.6, 0.05, 0.25]]))
    assert bank.entries(torch.tensor([0]),
                        target)['pseudo_label'].tolist() == [[0, 1, -1, 0]]
    # the release leaves the lowest classes unlabelled, dropping a positive
    # pseudo-label there
    release = DAMPLabelBank(4, 'teacher.npz', eta=0.3, threshold=0.4,
                            top_k=2, negative_fraction=0.25, num_samples=1)
    release.load_state_dict(bank.state_dict())
    assert release.entries(torch.tensor([0]),
                           target)['pseudo_label'].tolist() == [[0, 1, 0, 0]]
    release.crop_mean.copy_(torch.tensor([[1., -1., 1., 1.]]))  # class 1
    assert release.entries(torch.tensor([0]),
                           target)['pseudo_label'].tolist() == [[0, 0, 0, 0]]
    # an observed positive the teacher scores 0.6 caps eta_i at 0.3:
    # class 3's crop max (0.3) is then not above it, so its min (0.2) counts
    target = torch.tensor([[0., 1., 0., 0.]])
    positive, _ = bank.scores(torch.tensor([0]), target)
    torch.testing.assert_close(positive[0, 3], torch.tensor(0.2))


def test_state_dict_round_trip_into_an_empty_bank():
    bank = DAMPLabelBank(3, 'teacher.npz', num_samples=4, top_k=1)
    for name in bank.row_buffers:
        getattr(bank, name).uniform_()
    empty = DAMPLabelBank(3, 'teacher.npz', top_k=1)
    empty.load_state_dict(bank.state_dict())
    for name in bank.row_buffers:
        assert torch.equal(getattr(empty, name), getattr(bank, name))
    other = DAMPLabelBank(3, 'teacher.npz', num_samples=5, top_k=1)
    with pytest.raises(ValueError, match='holds 4 samples but the training '
                       'set has 5'):
        other.load_state_dict(bank.state_dict())


def test_bad_settings_and_empty_bank():
    with pytest.raises(ValueError, match='needs score_file'):
        TeacherLabelBank(3, None)
    with pytest.raises(ValueError, match=r'threshold \(tau\) must be in'):
        TeacherLabelBank(3, 'a.npz', threshold=2)
    with pytest.raises(ValueError, match=r'top_k must be None or an int in '
                       r'\[1, 3\]'):
        TeacherLabelBank(3, 'a.npz', top_k=4)
    with pytest.raises(ValueError, match='negative_fraction must be in'):
        TeacherLabelBank(3, 'a.npz', negative_fraction=1)
    with pytest.raises(ValueError, match='eta must be in'):
        DAMPLabelBank(3, 'a.npz', eta=-1)
    with pytest.raises(RuntimeError, match='SPMLTeacherScoreHook'):
        TeacherLabelBank(3, 'a.npz').entries(torch.tensor([0]),
                                             torch.zeros(1, 3))


def test_fill_reads_scores_and_crops():
    g = torch.Generator().manual_seed(0)
    whole, crops = torch.rand(6, 4, generator=g), torch.rand(6, 5, 4,
                                                              generator=g)
    # the table SPMLTeacherScoreHook reads (load_teacher_table), crops and
    # all for the bank that reads them
    assert not TeacherLabelBank.READS_CROPS and DAMPLabelBank.READS_CROPS
    bank = DAMPLabelBank(4, 'teacher.npz', threshold=0.5)
    stats = bank.fill_from(dict(scores=whole, crop_scores=crops))
    assert bank.num_samples == 6 and torch.equal(bank.teacher_score, whole)
    assert torch.equal(bank.crop_max, crops.amax(1))
    assert torch.equal(bank.crop_min, crops.amin(1))
    torch.testing.assert_close(bank.crop_mean, crops.mean(1))
    assert stats == dict(
        teacher_above_threshold=float((whole >= 0.5).sum(1).double().mean()),
        teacher_crops=5)
    with pytest.raises(ValueError, match='teacher.npz: scores have 4 classes '
                       'but model.head.num_classes is 3'):
        TeacherLabelBank(3, 'teacher.npz').fill_from(dict(scores=whole))
