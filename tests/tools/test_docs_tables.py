"""Every result number of the README, the documentation and the method
READMEs comes from its results json (.dev_scripts/docs_tables.py), and every
table a benchmark tool wrote under docs/results is what its json renders to."""
import json
import os.path as osp
import shutil
import subprocess

import numpy as np
import pytest

from tests.conftest import PYTHON, REPO
import docs_tables
from benchmark.pages import gpu_tier


def runs(*maps):
    return {str(seed): dict(mAP=m, seconds=10.) for seed, m in enumerate(maps)}


@pytest.fixture
def repo(tmp_path):
    """A repository with a README, a method README, a metafile and a demo
    results json: AN 80 and 82 (81.00 +- 1.00), full labels 96 and 96,
    GR 93 and 95 (94.00 +- 1.00, 13/15 of the gap: 87%)."""
    (tmp_path / 'docs' / 'results').mkdir(parents=True)
    (tmp_path / 'configs' / 'grloss').mkdir(parents=True)
    (tmp_path / 'docs' / 'results' / 'accuracy.json').write_text(json.dumps(
        dict(an=runs(80., 82.), full=runs(96., 96.), grloss=runs(93., 95.))))
    return tmp_path


def test_blocks_are_rendered_from_the_json(repo):
    readme = repo / 'README.md'
    readme.write_text(
        'GR <!-- results: mean_std accuracy grloss -->90.00 +- 9.99'
        '<!-- /results --> closes <!-- results: gap accuracy grloss -->1%'
        '<!-- /results --> (seeds <!-- results: seeds accuracy grloss -->0'
        '<!-- /results -->; AN at seed 1: <!-- results: seed accuracy an 1 '
        '-->0<!-- /results -->, mean <!-- results: mean accuracy an -->0'
        '<!-- /results -->).\n')
    assert docs_tables.run(str(repo), check=True) == [
        'README.md: numbers differ from the results json']
    assert 'rewritten' in docs_tables.run(str(repo))[0]
    assert readme.read_text() == (
        'GR <!-- results: mean_std accuracy grloss -->94.00 +- 1.00'
        '<!-- /results --> closes <!-- results: gap accuracy grloss -->87%'
        '<!-- /results --> (seeds <!-- results: seeds accuracy grloss -->0, 1'
        '<!-- /results -->; AN at seed 1: <!-- results: seed accuracy an 1 '
        '-->82.00<!-- /results -->, mean <!-- results: mean accuracy an -->'
        '81.00<!-- /results -->).\n')
    assert docs_tables.run(str(repo), check=True) == []


def test_differences_spreads_and_the_papers_gap(repo):
    # an ablation run of GR: 90 and 92 (91.00), against the default runs'
    # GR 94.00 (3 points below) and their AN 81 and full labels 96
    (repo / 'docs' / 'results' / 'ablation.json').write_text(
        json.dumps(dict(grloss=runs(90., 92.))))
    res = docs_tables.Results(str(repo / 'docs' / 'results'))

    def render(spec):
        return docs_tables.render(spec, res)

    assert render('diff ablation grloss accuracy grloss') == '-3.00'
    assert render('delta ablation grloss accuracy grloss') == '3.00'
    assert render('delta accuracy an accuracy full') == '15.00'
    assert render('std ablation grloss') == '1.00'
    # (91 - 81) / (96 - 81) of the default runs' gap
    assert render('gap_vs ablation grloss accuracy') == '67%'
    assert render('seed_list accuracy grloss') == '93.00 / 95.00'
    assert render('seconds accuracy grloss') == '10'
    # the GR paper on VOC: (89.83 - 85.89) / (89.42 - 85.89) of a 3.53 gap
    assert render('paper VOC grloss') == '89.83'
    assert render('paper_gap VOC grloss') == '112%'
    assert render('paper_gap_points VOC') == '3.53'
    assert render('paper_gap VOC opml') == '-'


def test_summary_table_puts_the_papers_beside_the_demo(repo):
    (repo / 'README.md').write_text(
        '<!-- results: summary --><!-- /results -->\n')
    docs_tables.run(str(repo))
    text = (repo / 'README.md').read_text()
    # GR's row: the demo runs and the GR paper's VOC and COCO (papers.json)
    assert '| GR | 94.00 +- 1.00 | 2 | 87% | 89.83 | 73.17 |' in text
    assert '| AN | 81.00 +- 1.00 | 2 | 0% | 85.89 | 64.92 |' in text


def test_a_number_typed_by_hand_is_named(repo):
    (repo / 'configs' / 'grloss' / 'README.md').write_text(
        'Demo: 94.00 +- 1.00 against <!-- results: mean_std accuracy an -->'
        '81.00 +- 1.00<!-- /results -->.\n')
    assert docs_tables.run(str(repo), check=True) == [
        "configs/grloss/README.md: '94.00 +- 1.00' is typed by hand; put it "
        'in a <!-- results: ... --> block']


def test_an_unknown_block_or_method_names_the_file(repo):
    (repo / 'README.md').write_text(
        '<!-- results: mean_std accuracy lasd -->1<!-- /results -->')
    with pytest.raises(ValueError, match=r"README.md: .*accuracy.json has no "
                       r"runs of 'lasd'"):
        docs_tables.run(str(repo), check=True)
    (repo / 'README.md').write_text('<!-- results: median x -->1'
                                    '<!-- /results -->')
    with pytest.raises(ValueError, match='unknown results block'):
        docs_tables.run(str(repo), check=True)


def test_metafile_map_comes_from_the_json_or_the_papers(repo):
    entry = ('  - Name: grloss_{0}\n    In Collection: GR Loss\n'
             '    Metadata:\n      Results From: {1}\n'
             '    Results:\n      - Task: Multi-Label Classification\n'
             '        Metrics:\n          mAP: {2}\n'
             '    Config: configs/grloss/{3}\n')
    meta = repo / 'configs' / 'grloss' / 'metafile.yml'
    paper = 'the GR paper, Table 2 (not reproduced by spml-mm)'
    meta.write_text('Models:\n' + entry.format(
        'demo', 'spml-mm (seed 0)', '11.11', 'grloss_vgg11bn_demo.py') +
        entry.format('voc', paper, '89.83', 'resnet50_voc.py') +
        entry.format('coco', 'typed by hand', '70.00', 'resnet50_coco.py'))
    assert docs_tables.run(str(repo), check=True) == [
        'configs/grloss/metafile.yml: numbers differ from the results json']
    docs_tables.run(str(repo))
    text = meta.read_text()
    # the demo entry from the json, the papers' from docs/results/papers.json
    assert entry.format(
        'demo', 'spml-mm, docs/results/accuracy.md (mean of seeds 0, 1)',
        '94.00', 'grloss_vgg11bn_demo.py') in text
    assert entry.format('voc', paper, '89.83', 'resnet50_voc.py') in text
    assert entry.format('coco', paper, '73.17', 'resnet50_coco.py') in text


def test_the_papers_table_prints_each_number_as_its_paper():
    table = docs_tables.paper_table()
    # LL-R's paper prints one decimal, OPML's a trailing zero
    assert table['LL-R'] == ['89.2', '71.0', '47.4', '19.5']
    assert table['OPML-SP'][0] == '89.20'
    assert table['AEVLP'] == ['90.46', '73.54', '50.70', '24.89']
    assert docs_tables.PAPER_ROWS['opml_sp'] == 'OPML-SP'
    assert docs_tables.PAPER_ROWS['vlpl'] == 'VLPL'


def test_every_result_number_in_the_repository_matches_its_json():
    """Blocks, metafiles and every page a tool wrote whole (each rendered
    again from its json: the seeds, rate-search, cost, selection, label
    bank, GPU and teacher pages, docs/RESULTS.md)."""
    assert docs_tables.run(REPO, check=True) == []


def test_a_tool_page_is_compared_with_what_its_json_renders_to(repo):
    """A page a tool writes whole is rendered again from its json; the
    command and the machine match any text; a page no renderer covers is
    named, one without a json (NO_JSON) is not."""
    folder = repo / 'docs' / 'results'
    tier = dict(command='pytest tests -m gpu', status='ok', seconds=12.,
                environment=dict(device='NVIDIA H100', torch='2.11', cuda='13',
                                 cudnn=9, mmengine='0.10.7',
                                 mmpretrain='1.2.0'),
                passed=1, failed=0, errors=0, skipped=0,
                tests={'tests.gpu::test_a': dict(outcome='passed',
                                                 seconds=1.)})
    (folder / 'gpu_tier.json').write_text(json.dumps(tier))
    (folder / 'gpu_tier.md').write_text(gpu_tier.tier_page(tier))
    (folder / 'faults.md').write_text('| fault | 2.5 s |\n')
    (folder / 'data_loading.json').write_text(json.dumps(dict(rows=dict(
        train_dataloader=dict(batch_size=8, stock_s=.006, cached_s=.003)))))
    (folder / 'data_loading.md').write_text(
        '# Data loading\n\n`any command` on any machine.\n\n'
        '| loader | batch | decoding files (ms) | image cache (ms) | '
        'speed-up |\n| --- | --- | --- | --- | --- |\n'
        '| train_dataloader | 8 | 6.00 | 3.00 | 2.0x |\n')
    assert docs_tables.run(str(repo), check=True) == []
    tier['tests']['tests.gpu::test_a']['seconds'] = 2.
    (folder / 'gpu_tier.json').write_text(json.dumps(tier))
    (folder / 'notes.md').write_text('measured 2.5 s\n')
    problems = docs_tables.run(str(repo), check=True)
    assert problems[0].startswith(
        "docs/results/gpu_tier.md: differs from what its json renders to, "
        "from line 9: '| `tests.gpu::test_a` | passed | 1.0 |  |', rendered "
        "'| `tests.gpu::test_a` | passed | 2.0 |  |'")
    assert problems[1:] == [
        'docs/results/notes.md: no <!-- results: ... --> block and no '
        'renderer in TOOL_PAGES of .dev_scripts/docs_tables.py: nothing '
        'checks its numbers against a json']
    # not rewritten: its tool writes it
    assert docs_tables.run(str(repo))[0] == problems[0]


@pytest.mark.slow
def test_check_names_a_gpu_page_whose_json_changed(tmp_path):
    """``python .dev_scripts/docs_tables.py --check`` on a checkout whose
    gpu.json has the fp16 stock row doubled, gpu.md unchanged: exit 1, gpu.md
    named."""
    for name in ('tools', '.dev_scripts', 'docs', 'configs'):
        shutil.copytree(osp.join(REPO, name), tmp_path / name,
                        ignore=shutil.ignore_patterns(
                            '_build', 'model_zoo', '__pycache__'))
    shutil.copy(osp.join(REPO, 'README.md'), tmp_path)
    path = tmp_path / 'docs' / 'results' / 'gpu.json'
    record = json.loads(path.read_text())
    record['heads']['fp16']['stock']['images_per_s'] *= 2
    path.write_text(json.dumps(record))
    proc = subprocess.run([PYTHON, '.dev_scripts/docs_tables.py', '--check'],
                          cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.splitlines()[0].startswith(
        'docs/results/gpu.md: differs from what its json renders to')
    assert len(proc.stdout.splitlines()) == 1


def label_entry(like, fraction, avg, fnr):
    """A label_stats.json entry as make_proxy_data.py --record writes it."""
    split = dict(images=100, avg_positives=avg, max_frequency=.4,
                 min_frequency=.025, an_false_negative_rate=fnr,
                 within_group_lift=2.345, between_group_lift=.5)
    return dict(arguments=dict(like=like, fraction=fraction),
                targets=dict(num_classes=20, avg_positives=1.46,
                             max_frequency=.4, min_frequency=.025,
                             num_train=5717, num_test=5823),
                protocol=dict(train=80, val=20, test=1165), train=split,
                val=dict(split, avg_positives=1.5), seconds=63.6,
                command='python tools/make_proxy_data.py --like voc')


@pytest.fixture
def res(repo):
    """label_stats.json with a VOC-like proxy (1.46 positives per image:
    (1.46 - 1) / 19 = 2.42% false negatives) and the demo (10 classes),
    linear_probe.json and a selection.json of one method, two seeds."""
    folder = repo / 'docs' / 'results'
    (folder / 'label_stats.json').write_text(json.dumps({
        'proxy-voc': label_entry('voc', 1., 1.46, .46 / 19),
        'proxy-voc-f0.2': label_entry('voc', .2, 1.46, .46 / 19),
        'demo': dict(num_classes=10, command='python tools/make_demo_data.py',
                     train=dict(images=40, avg_positives=2.0475,
                                an_false_negative_rate=1.0475 / 9))}))
    (folder / 'linear_probe.json').write_text(json.dumps({
        'tex': dict(full={'5': 37.5, '10': 39.25}, AN={'5': 35., '10': 34.}),
        'gly': dict(full={'5': 20., '10': 24.}, AN={'5': 21., '10': 22.})}))

    def epochs(*rows):  # (full, observed, test) per epoch
        return {str(e + 1): dict(full=f, observed=o, **{'subset-2': [f, o]},
                                 test=t) for e, (f, o, t) in enumerate(rows)}

    # seed 0: full labels pick 1e-3 epoch 2 (test 45), observed 1e-2
    # epoch 1 (30); seed 1: both pick 1e-3 epoch 1 (41)
    (folder / 'selection.json').write_text(json.dumps({'an': {
        '0': {'0.001': epochs((50, 10, 40), (60, 5, 45)),
              '0.01': epochs((55, 30, 30))},
        '1': {'0.001': epochs((70, 50, 41), (60, 10, 47))}}}))
    return docs_tables.Results(str(folder))


def test_label_statistics_render_from_the_generators_json(res):
    render = lambda spec: docs_tables.render(spec, res)  # noqa: E731
    assert render('label_stat label_stats proxy-voc train.avg_positives') \
        == '1.46'
    assert render('label_stat label_stats proxy-voc train.min_frequency') \
        == '2.50%'
    assert render('label_stat label_stats proxy-voc protocol.test') == \
        '1,165'
    assert render('label_stat label_stats proxy-voc seconds') == '64'
    table = render('label_table label_stats proxy-voc proxy-voc-f0.2')
    assert '| images | 5,717 / 5,823 | 100 | 100 | 0.2 of 5,717 / 5,823 |' \
        in table
    assert '| protocol split |  | 80 train, 20 val | 1,165 test |' in table
    # target, official train, official val
    assert '| positives per image | 1.46 | 1.4600 | 1.5000 |' in table
    assert '| AN false-negative rate | 2.42% | 2.42% | 2.42% |' in table
    assert '| lift within a class group | - | 2.35 | 2.35 |' in table
    noise = render('an_noise_table label_stats demo proxy-voc')
    assert ('| demo (`tools/make_demo_data.py`, measured, official train '
            'split) | 10 | 2.05 | 11.64% |') in noise
    assert '| VOC-like proxy (`tools/make_proxy_data.py`' in noise
    # published: (31.4 - 1) / 311 of CUB's labels
    assert '| CUB-200-2011 (published statistics) | 312 | 31.4 | 9.77% |' \
        in noise


def test_a_missing_label_statistic_names_the_json_and_the_fix(res):
    with pytest.raises(ValueError, match=r"label_stats.json has no data set "
                       r"'proxy-coco' \(its generator's --record writes it"):
        docs_tables.render('label_stat label_stats proxy-coco seconds', res)
    with pytest.raises(ValueError, match=r"label_stats.json: 'proxy-voc' has "
                       r"no 'train.median'"):
        docs_tables.render('label_stat label_stats proxy-voc train.median',
                           res)
    with pytest.raises(ValueError, match="'arguments' is none of the stat"):
        docs_tables.render('label_stat label_stats proxy-voc arguments', res)


def test_selection_picks_and_rates_from_the_json(res):
    picks = docs_tables.render('selection_picks observed', res)
    assert '| AN | 0 | 1e-3, 2 (45.00) | 1e-2, 1 (30.00) |' in picks
    assert '| AN | 1 | 1e-3, 1 (41.00) | 1e-3, 1 (41.00) |' in picks
    assert docs_tables.render('selection_same_rate observed', res) == \
        '1 of 2'
    with pytest.raises(ValueError, match="'subset-2' is not a criterion "
                       'with one value per epoch'):
        docs_tables.render('selection_picks subset-2', res)


def test_probe_and_theorem_kinds(res):
    table = docs_tables.render('probe_table linear_probe tex=textures gly',
                               res)
    assert '| classes | labels | test mAP after 5 / 10 epochs |' in table
    assert '| textures | full | 37.50 / 39.25 |' in table
    assert '| gly | AN | 21.00 / 22.00 |' in table
    # best full 39.25 above best AN 35; glyphs 24 above 22
    assert docs_tables.render('probe_gap linear_probe tex', res) == '4.25'
    assert docs_tables.render('probe_best linear_probe gly full', res) == \
        '24.00'
    with pytest.raises(ValueError, match="linear_probe.json has no probe of "
                       "'dots'"):
        docs_tables.render('probe_gap linear_probe dots', res)
    # (1 + 0.1 (1.46 - 1)) / (20 - 1.46) for the VOC-like linear LASD
    assert docs_tables.render(
        'lasd_lambda configs/lasd/efficientnet-lite0-linear_proxy-voc.py',
        res) == f'{(1 + .1 * .46) / 18.54:.4f}' == '0.0564'


def test_every_decimal_of_a_hand_written_results_page_is_a_block(repo):
    page = repo / 'docs' / 'results' / 'proxy.md'
    page.write_text(
        'AN <!-- results: mean accuracy an -->81.00<!-- /results --> against '
        'a typed 2.42% and 0.0564 (Theorem 5.4); `lr=0.001`, mmpretrain '
        '1.2.0, f0.2.\n'
        '```bash\npython x.py --fraction 0.1\n```\n')
    assert docs_tables.run(str(repo), check=True) == [
        f"docs/results/proxy.md: {n!r} is typed by hand; put it in a "
        '<!-- results: ... --> block' for n in ('2.42', '0.0564')]
    # a page without a block is a tool's output, checked against its json
    page.write_text('a typed 2.42\n')
    assert docs_tables.run(str(repo), check=True) == [
        'docs/results/proxy.md: no <!-- results: ... --> block and no '
        'renderer in TOOL_PAGES of .dev_scripts/docs_tables.py: nothing '
        'checks its numbers against a json']


def test_the_generators_record_what_the_pages_render(tmp_path, monkeypatch):
    from tools import make_demo_data, make_proxy_data
    record = tmp_path / 'label_stats.json'
    for tool, args in ((make_proxy_data, [
            '--like', 'voc', '--fraction', '0.004', '--image-size', '32',
            '--out-dir', str(tmp_path / 'proxy-voc-f0.004')]),
                       (make_demo_data, [
                           '--num-train', '20', '--num-test', '10',
                           '--out-dir', str(tmp_path / 'demo')])):
        monkeypatch.setattr('sys.argv', ['x.py', *args, '--record',
                                         str(record)])
        tool.main()
    found = json.loads(record.read_text())
    proxy, demo = found['proxy-voc-f0.004'], found['demo']
    with open(tmp_path / 'proxy-voc-f0.004' / 'statistics.json') as f:
        assert proxy['train'] == json.load(f)['train']
    labels = np.load(tmp_path / 'demo' / 'formatted_train_labels.npy')
    assert demo['train']['avg_positives'] == labels.sum(1).mean()
    assert demo['train']['an_false_negative_rate'] == pytest.approx(
        (labels.sum(1) - 1).mean() / 9)
    assert proxy['protocol']['test'] == 23 and proxy['seconds'] > 0
    assert proxy['command'].endswith(f'--record {record}')


def test_label_bank_update_page_is_checked_against_its_before_json(tmp_path):
    """label_bank_update.md prints the "before" column of
    label_bank_update_before.json: a change of that json is named (it was
    exempted as having no json, and --check matched every number)."""
    rel = 'docs/results/label_bank_update.md'
    with open(osp.join(REPO, rel)) as f:
        page = f.read()
    assert rel not in docs_tables.NO_JSON
    assert docs_tables.tool_page_problem(REPO, rel, page) is None
    folder = tmp_path / 'docs' / 'results'
    folder.mkdir(parents=True)
    with open(osp.join(REPO, 'docs', 'results',
                       'label_bank_update_before.json')) as f:
        before = json.load(f)
    before['banks'][0]['update'][1] += 0.1
    (folder / 'label_bank_update_before.json').write_text(json.dumps(before))
    problem = docs_tables.tool_page_problem(str(tmp_path), rel, page)
    assert f"{before['banks'][0]['name']}, APL update: " in problem
    assert f"its json's before is {before['banks'][0]['update'][1]:.3f}" \
        in problem
