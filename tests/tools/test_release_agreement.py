"""VLPL's and AEVLP's losses and DAMP's pseudo-labels, and IGNORE's loss, CAM
mask and thresholds, against the releases' own functions
(.dev_scripts/analysis/release_agreement.py). The releases are not part of
spml-mm: each test runs where a git clone of its release is found, named by
SPML_VLPL_REPO, SPML_AEVLP_REPO and SPML_IGNORE_REPO, and is skipped
elsewhere."""
import os
import os.path as osp

import pytest

from analysis import release_agreement as ra

VLPL = os.environ.get('SPML_VLPL_REPO', '/work/.mirror/mvrl+VLPL/repo')
AEVLP = os.environ.get('SPML_AEVLP_REPO',
                       '/work/.mirror/Fsoft-AIC+AEVLP/repo')

IGNORE = os.environ.get('SPML_IGNORE_REPO',
                        '/work/.mirror/gyeong-ryeol-song+SPML-IGNORE/repo')

teachers = pytest.mark.skipif(
    not (osp.isdir(VLPL) and osp.isdir(AEVLP)),
    reason='the VLPL and AEVLP releases are not here (SPML_VLPL_REPO, '
    'SPML_AEVLP_REPO)')
ignore = pytest.mark.skipif(
    not osp.isdir(IGNORE),
    reason='the IGNORE release is not here (SPML_IGNORE_REPO)')


@teachers
def test_losses_agree_but_for_the_releases_epsilon():
    for rows in (ra.compare_vlpl(VLPL, seeds=range(2)),
                 ra.compare_gpr(AEVLP, seeds=range(2))):
        for name, d in rows.items():
            if "release's eps = 0" in name:
                # float32 (ours) against float64 (theirs)
                assert d['value_rel'] < 1e-6 and d['grad_rel'] < 1e-6, name
            elif 'N(0, 2^2)' in name:
                # -log(x + 1e-5) (VLPL) or 1e-7 (AEVLP) against the exact log
                assert 1e-7 < d['value_rel'] < 1e-3, name


@teachers
def test_damp_pseudo_labels_are_the_releases():
    for name, d in ra.compare_damp(AEVLP, seeds=range(2)).items():
        assert d['release_positives'] > 0 and d['differing'] == 0, name


@ignore
def test_ignore_agrees_but_for_the_releases_epsilon():
    from benchmark.pages.release_agreement import ignore_undocumented
    rows = dict(loss=ra.compare_ignore_loss(IGNORE, seeds=range(1)),
                mask=ra.compare_ignore_mask(IGNORE, seeds=range(1)),
                steps=ra.compare_ignore_steps(IGNORE, steps=16))
    assert ignore_undocumented(rows) == []
    for name, d in rows['loss'].items():
        if 'N(0, 2^2)' in name and "eps = 0" not in name:
            # -log(x + 1e-5) against the exact log
            assert 1e-7 < d['value_rel'] < 1e-3, name
    assert all(d['release_kept'] for d in rows['mask'].values())
    assert all(d['release_rejected'] for d in rows['steps'].values())
