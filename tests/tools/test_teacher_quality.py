import pytest

from benchmark.pages.teacher_quality import crossing


def test_crossing_interpolates_between_levels():
    levels = {
        '1': dict(teacher_mAP=10., mean=60.),
        '0.5': dict(teacher_mAP=30., mean=70.),
        '0': dict(teacher_mAP=100., mean=80.),
    }
    assert crossing(levels, 75.) == 30. + 5 * 70 / 10
    assert crossing(levels, 50.) == 10.
    assert crossing(levels, 81.) is None


def test_page_reports_the_real_teacher(tmp_path):
    """The page's real-teacher section from a json with hand values."""
    from benchmark.pages.teacher_quality import write_outputs

    def runs(*maps):
        return {str(i): dict(mAP=m, seconds=1.) for i, m in enumerate(maps)}

    results = dict(
        fraction=0.2, teachers={'1': 10., '0.5': 50., '0': 100.},
        an=runs(30., 32.), grloss=runs(40., 40.),
        vlpl={'1': runs(20.), '0.5': runs(40.), '0': runs(60.)},
        aevlp={'1': runs(25.), '0.5': runs(45.), '0': runs(65.)},
        real_teacher=dict(
            mAP=60., own_test_mAP=70., data_seed=1, command='CMD',
            config='configs/an/full.py', vlpl=runs(41., 43.),
            aevlp=runs(47.)))
    write_outputs(results, str(tmp_path), 'SWEEP', 0.2)
    page = (tmp_path / 'teacher_quality.md').read_text()
    section = page[page.index('## A real teacher'):]
    assert 'Written by `CMD`.' in section
    assert ('is 60.00 (on its own instance\'s test split 70.00), between '
            'the synthetic teachers of noise 0.5 (teacher mAP 50.00) and '
            'noise 0 (teacher mAP 100.00)') in section
    # VLPL: mean 42, std 1; on the curve 40 + (60 - 50) * 20 / 50 = 44
    assert '| VLPL | 42.00 +- 1.00 | 2 | 44.00 |' in section
    assert '| AEVLP | 47.00 +- 0.00 | 1 | 49.00 |' in section
    assert ('GR, has 40.00: VLPL with the real teacher is +2.00 from it; '
            'AEVLP with the real teacher is +7.00 from it.') in section
    # VLPL is below the curve (42 < 44): no claim that every method gains
    assert 'Every method gains more' not in section
    assert (tmp_path / 'teacher_quality.png').stat().st_size > 0


def test_a_teacher_instance_of_another_image_size_is_refused(
        tmp_path, monkeypatch):
    """The second proxy instance is made at the main proxy's image size;
    one left from a main proxy made at another size is named, not reused
    (the teacher would train on 32 px images and score 128 px ones)."""
    import json

    from benchmark import teacher_quality
    for root, side in (('data/proxy-voc-f0.01', 128),
                       ('data/proxy-voc-seed1-f0.01', 32)):
        (tmp_path / root).mkdir(parents=True)
        (tmp_path / root / 'formatted_val_labels_obs.npy').touch()
        (tmp_path / root / 'statistics.json').write_text(
            json.dumps(dict(arguments=dict(image_size=side))))
    monkeypatch.setattr(teacher_quality, 'REPO', str(tmp_path))
    with pytest.raises(RuntimeError, match=r'proxy-voc-seed1-f0.01 has 32 px '
                       r'images, the main proxy data/proxy-voc-f0.01 128 px'):
        teacher_quality.teacher_data(0.01, 'finetune')
    (tmp_path / 'data/proxy-voc-seed1-f0.01/statistics.json').write_text(
        json.dumps(dict(arguments=dict(image_size=128))))
    assert teacher_quality.teacher_data(0.01, 'finetune')[0].endswith(
        'data_root=data/proxy-voc-seed1-f0.01')
