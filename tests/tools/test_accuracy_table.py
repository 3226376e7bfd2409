"""tools/benchmark/accuracy.py: the table with an earlier run beside it."""
import os.path as osp
import sys

from tests.conftest import REPO

sys.path.insert(0, osp.join(REPO, 'tools', 'benchmark'))
import accuracy  # noqa: E402


def runs(*maps):
    return {str(seed): dict(mAP=m, seconds=10.) for seed, m in enumerate(maps)}


def test_comparison_columns_give_the_change_of_the_mean(tmp_path):
    now = accuracy.summarize(
        dict(an=runs(80., 82.), full=runs(96., 96.), gr=runs(93., 95.)),
        ['an', 'full', 'gr'])
    before = accuracy.summarize(dict(an=runs(79., 79.), full=runs(95., 97.)),
                                ['an', 'full', 'gr'])
    accuracy.write_outputs(now, str(tmp_path), 'cmd', False,
                           ('old defaults', before))
    text = (tmp_path / 'accuracy.md').read_text()
    assert ('| method | test mAP (%) | spread (std) | seeds | share of '
            'AN-to-full gap closed | training time (s) | old defaults (%) | '
            'change |') in text
    # AN: 81 +- 1 now, 79 +- 0 before; GR has no earlier run
    assert '| AN | 81.00 | 1.00 | 2 | 0% | 10 | 79.00 +- 0.00 | +2.00 |' \
        in text
    assert '| GR | 94.00 | 1.00 | 2 | 87% | 10 | - | - |' in text
    assert (tmp_path / 'accuracy.png').is_file()
