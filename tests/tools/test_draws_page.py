"""benchmark.draws' page renders from its json alone: mAP per method and
draw with the change from the uniform draw, and the calibrations."""
from benchmark.pages.draws import render


def test_the_page_shows_each_draw_against_the_uniform_one():
    row = dict(method='an', label='AN', seed=0, seconds=1., m_true=2.06,
               m_est=1.9, prior_error=3.25, observed_min_class=4,
               conformal_recall=81.5, conformal_min_class_recall=60.)
    data = dict(seeds=[0], note='one seed.', rows={
        'uniform/an/0': dict(row, draw='uniform', mAP=85.5),
        'commonest/an/0': dict(row, draw='commonest', mAP=80.25),
    })
    page = render(data)
    assert '| method | uniform | commonest |' in page
    assert '| AN | 85.50 | 80.25 (-5.25) |' in page
    assert '| AN | commonest | 2.06 | 1.90 | 3.25 | 4 | 81.5% | 60.0% |' \
        in page
    assert 'seed(s) 0; one seed.' in page
