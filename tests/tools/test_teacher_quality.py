from tools.benchmark.teacher_quality import crossing


def test_crossing_interpolates_between_levels():
    levels = {
        '1': dict(teacher_mAP=10., mean=60.),
        '0.5': dict(teacher_mAP=30., mean=70.),
        '0': dict(teacher_mAP=100., mean=80.),
    }
    assert crossing(levels, 75.) == 30. + 5 * 70 / 10
    assert crossing(levels, 50.) == 10.
    assert crossing(levels, 81.) is None
