"""Write every result number of the README, the documentation pages and the
method READMEs from the results json it belongs to.

A Markdown file holds a generated number or table between two comments,
invisible on the rendered page::

    GR: <!-- results: mean_std accuracy grloss -->94.42 +- 0.51<!-- /results -->

``<!-- results: KIND ARGS -->`` names what goes there (:data:`KINDS`); STEM
is a json of ``docs/results/`` without ``.json`` (``accuracy`` is the demo
benchmark, ``accuracy_proxy-voc_linear-f0.2`` a proxy table), METHOD a method's key
(``spml_mm.apis.list_methods(variants=True)``). The demo configs' ``mAP`` in the
method folders' ``metafile.yml`` are written from ``accuracy.json`` too.
``benchmark.accuracy`` runs this after it writes ``docs/results``.

A page a benchmark tool writes whole (``docs/RESULTS.md`` and each page under
``docs/results`` without a block) is rendered again from its json in memory
(:data:`TOOL_PAGES`, with the renderers of ``benchmark.pages``, the
tools' own) and compared line by line; what the json does not hold
(the command, the machine, a title) matches any text. Such a page is named
when it differs, and so is one that no renderer covers (:data:`NO_JSON` lists
the pages without a json, and why); this tool does not rewrite them, their
tool does.

Example:
    # rewrite every block and metafile
    python .dev_scripts/docs_tables.py
    # name each one that differs; exit 1
    python .dev_scripts/docs_tables.py --check
    PYTHONPATH=.dev_scripts python -m docs_tables --check   # the same
"""
import argparse
import contextlib
import functools
import glob
import io
import itertools
import json
import os
import os.path as osp
import re
import sys
import tempfile
from fnmatch import fnmatch
from typing import Callable, Dict, List, Optional, Tuple

if __name__ == '__main__' and __spec__ is None:
    # run as a file (python .dev_scripts/docs_tables.py): run it as the
    # module it is, from the repository root with .dev_scripts on the path
    os.chdir(osp.dirname(osp.dirname(osp.abspath(__file__))))
    os.execve(sys.executable,
              [sys.executable, '-m', 'docs_tables', *sys.argv[1:]],
              dict(os.environ, PYTHONPATH=os.pathsep.join(
                  [osp.join(os.getcwd(), '.dev_scripts')] +
                  [p for p in [os.environ.get('PYTHONPATH')] if p])))

from benchmark.pages import (accuracy, data_loading, gpu,  # noqa: E402
                             gpu_profile, gpu_tier, head_profile,
                             label_bank, label_sets, release_agreement,
                             results, selection, speed,
                             teacher_quality)
from benchmark.pages import draws as draws_page  # noqa: E402
from benchmark.pages.accuracy import summarize  # noqa: E402
from benchmark.pages.results import (paper_datasets,  # noqa: E402
                                     paper_table, papers)
from benchmark.suites import (METHODS, STUDY_METHODS, label_of,  # noqa: E402
                              suite_config)
from benchmark.common import REPO, machine_summary  # noqa: E402

BLOCK = re.compile(r'<!-- results: (?P<spec>[^>]*?) -->(?P<body>.*?)'
                   r'<!-- /results -->', re.S)
#: a mean and spread typed by hand, outside any block
HAND_COPIED = re.compile(r'\b\d{2}\.\d{2} \+- \d+\.\d{2}\b')
#: a decimal number ("2.42", "0.0564"; not a version such as 1.2.0, nor
#: the number of a paper's part such as "Theorem 5.4")
DECIMAL = re.compile(r'(?<!Theorem )(?<!Section )(?<!Table )(?<!Figure )'
                     r'(?<![\w.])\d+\.\d+(?!\.?\w)')
#: code: fenced blocks and inline spans (commands and config values)
CODE = re.compile(r'```.*?```|`[^`\n]*`', re.S)
#: the columns of the papers' table (docs/results/papers.json)
COLUMNS = list(paper_datasets().values())
#: method key -> the name of its row in the papers' table
PAPER_ROWS = {row['method']: row['name'] for row in papers()['rows']}


def results_dir(repo: str = REPO) -> str:
    return osp.join(repo, 'docs', 'results')


def markdown_files(repo: str = REPO) -> List[str]:
    """The README, every documentation page and every method README."""
    files = [osp.join(repo, 'README.md')]
    files += glob.glob(osp.join(repo, 'docs', '**', '*.md'), recursive=True)
    files += glob.glob(osp.join(repo, 'configs', '*', 'README.md'))
    # docs/model_zoo holds the build's copies of the method READMEs
    return sorted(f for f in files if osp.isfile(f) and not any(
        part in f.split(osp.sep) for part in ('_build', 'model_zoo')))


class Results:
    """The json files of a results folder, each summarized once."""

    def __init__(self, folder: str):
        self.folder = folder
        self._rows: Dict[str, dict] = {}
        self._raw: Dict[str, dict] = {}

    def raw(self, stem: str) -> dict:
        if stem not in self._raw:
            path = osp.join(self.folder, f'{stem}.json')
            if not osp.isfile(path):
                raise ValueError(f'no results file {path}')
            with open(path) as f:
                self._raw[stem] = json.load(f)
        return self._raw[stem]

    def rows(self, stem: str) -> dict:
        """Per method: mean, std, n and gap_closed (accuracy's summary)."""
        if stem not in self._rows:
            raw = self.raw(stem)
            self._rows[stem] = summarize(raw,
                                         [m for m in METHODS if m in raw])
        return self._rows[stem]

    def row(self, stem: str, method: str) -> dict:
        rows = self.rows(stem)
        if method not in rows:
            raise ValueError(f'{stem}.json has no runs of {method!r}')
        return rows[method]


def summary(res: Results) -> str:
    """The README's table: the demo runs beside the papers' VOC and COCO."""
    papers = paper_table()
    lines = ['| method | demo | seeds | share of AN-to-full gap | paper VOC '
             '| paper COCO |', '| --- | --- | --- | --- | --- | --- |']
    for method, row in res.rows('accuracy').items():
        paper = papers.get(PAPER_ROWS.get(method), ['-', '-'])
        gap = row.get('gap_closed')
        lines.append(
            f'| {label_of(method)} | {row["mean"]:.2f} +- '
            f'{row["std"]:.2f} | {row["n"]} | '
            f'{"-" if gap is None else f"{100 * gap:.0f}%"} | '
            f'{paper[0]} | {paper[1]} |')
    return '\n' + '\n'.join(lines) + '\n'


def _seed(res: Results, stem: str, method: str, seed: str) -> str:
    runs = res.raw(stem).get(method, {})
    if seed not in runs:
        raise ValueError(f'{stem}.json has no seed {seed} of {method!r}')
    return f'{runs[seed]["mAP"]:.2f}'


def _gap(res: Results, stem: str, method: str) -> str:
    gap = res.row(stem, method).get('gap_closed')
    if gap is None:
        raise ValueError(f'{stem}.json lacks AN or full labels for the gap')
    return f'{100 * gap:.0f}%'


def _seeds(res: Results, stem: str, method: str) -> str:
    return ', '.join(sorted(res.raw(stem).get(method, {}), key=int))


def _paper(dataset: str, method: str) -> str:
    column = COLUMNS.index(dataset)
    return paper_table()[PAPER_ROWS[method]][column]


def _paper_gap(dataset: str, method: str) -> Optional[float]:
    """The share of the AN-to-full gap a method closes in its paper."""
    if method not in PAPER_ROWS:
        return None
    an, full, got = (float(_paper(dataset, m)) for m in ('an', 'full', method))
    return (got - an) / (full - an)


def _percent(share: Optional[float]) -> str:
    return '-' if share is None else f'{100 * share:.0f}%'


def _suite_label(stem: str) -> str:
    return 'VOC-like' if 'proxy-voc' in stem else 'COCO-like'


def _rate(lr: float) -> str:
    """1e-3 rather than 0.001, as the tables write rates."""
    mantissa, exponent = f'{lr:.0e}'.split('e')
    return f'{mantissa}e{int(exponent)}'


def lr_table(res: Results, *stems: str) -> str:
    """Best validation mAP per learning rate of each proxy's
    ``<stem>_lr_search.json`` side by side, the best in bold."""
    searches = [res.raw(f'{s}_lr_search') for s in stems]
    rates = [sorted({float(lr) for runs in found.values() for lr in runs})
             for found in searches]
    lines = ['| method | ' + ' | '.join(
        f'{_suite_label(s)}: ' + ' / '.join(_rate(lr) for lr in r) +
        ' | chosen' for s, r in zip(stems, rates)) + ' |',
        '| --- ' * (1 + 2 * len(stems)) + '|']
    methods = [m for m in METHODS if all(m in f for f in searches)]
    for method in methods:
        cells = []
        for found, grid in zip(searches, rates):
            runs = found[method]
            best = max(runs, key=lambda lr: runs[lr]['val_mAP'])
            cells.append(' / '.join(
                '-' if f'{lr:g}' not in runs else
                (f'**{runs[f"{lr:g}"]["val_mAP"]:.2f}**' if f'{lr:g}' == best
                 else f'{runs[f"{lr:g}"]["val_mAP"]:.2f}') for lr in grid) +
                f' | {_rate(float(best))}')
        lines.append(f'| {label_of(method)} | ' + ' | '.join(cells) + ' |')
    return '\n' + '\n'.join(lines) + '\n'


def share_table(res: Results, *stems: str) -> str:
    """Test mAP and share of the AN-to-full gap of each proxy's json side by
    side, and the papers' share on the dataset each proxy imitates."""
    datasets = ['VOC' if 'proxy-voc' in s else 'COCO' for s in stems]
    lines = ['| method | ' + ' | '.join(
        f'{_suite_label(s)} proxy | share of gap' for s in stems) + ' | ' +
        ' | '.join(f'paper, {d}: share of gap' for d in datasets) + ' |',
        '| --- ' * (1 + 3 * len(stems)) + '|']
    methods = [m for m in METHODS if all(m in res.rows(s) for s in stems)]
    for method in methods:
        cells = [f'{KINDS["mean_std"](res, s, method)} | '
                 f'{_percent(res.row(s, method).get("gap_closed"))}'
                 for s in stems]
        cells += [_percent(_paper_gap(d, method)) for d in datasets]
        lines.append(f'| {label_of(method)} | ' + ' | '.join(cells) + ' |')
    return '\n' + '\n'.join(lines) + '\n'


def _diff(res: Results, stem: str, method: str, base: str,
          base_method: str) -> str:
    """STEM's METHOD against BASE's BASE_METHOD, in mean test mAP."""
    change = res.row(stem, method)['mean'] - res.row(base, base_method)['mean']
    return f'{change:+.2f}'


def _delta(res: Results, stem: str, method: str, base: str,
           base_method: str) -> str:
    """How far apart two means are, without a sign ("trails AN by 0.84")."""
    return _diff(res, stem, method, base, base_method).lstrip('+-')


def _gap_vs(res: Results, stem: str, method: str, base: str) -> str:
    """The share of BASE's AN-to-full gap that STEM's METHOD closes (an
    ablation run against the default runs' AN and full labels)."""
    an, full = (res.row(base, m)['mean'] for m in ('an', 'full'))
    return _percent((res.row(stem, method)['mean'] - an) / (full - an))


def _paper_gap_points(dataset: str) -> str:
    an, full = (float(_paper(dataset, m)) for m in ('an', 'full'))
    return f'{full - an:.2f}'


def _lr_val(res: Results, stem: str, method: str, lr: str) -> str:
    """A learning-rate search's best validation mAP of METHOD at LR."""
    return f'{res.raw(f"{stem}_lr_search")[method][lr]["val_mAP"]:.2f}'


def _seed_list(res: Results, stem: str, method: str) -> str:
    runs = res.raw(stem).get(method, {})
    return ' / '.join(f'{runs[s]["mAP"]:.2f}' for s in sorted(runs, key=int))


def _selection(res: Results) -> dict:
    """``benchmark.selection``'s summary of ``selection.json``."""
    if 'selection' not in res._rows:
        found = res.raw('selection')
        res._rows['selection'] = selection.summarize(
            found, [m for m in STUDY_METHODS if m in found])
    return res._rows['selection']


def selection_table(res: Results) -> str:
    labels = {'full': 'full labels, all validation images',
              'observed': 'observed single positives, all validation images'}
    labels.update({c: f'full labels, {c.split("-")[1]} images'
                   for c in _selection(res) if c.startswith('subset-')})
    return '\n' + '\n'.join(
        selection.table_lines(_selection(res), labels)) + '\n'


def _selection_loss(res: Results, criterion: str,
                    method: Optional[str] = None) -> str:
    """The mean test mAP lost over the methods ("0.48"), or one method's
    change against selecting on full labels ("-1.21")."""
    rows = _selection(res)[criterion]
    if method is None:
        return f'{sum(r["lost"] for r in rows.values()) / len(rows):.2f}'
    return f'{-rows[method]["lost"] or 0.:+.2f}'


def _selection_runs(res: Results, method: str) -> dict:
    found = res.raw('selection')
    if method not in found:
        raise ValueError(f'selection.json has no runs of {method!r}')
    return found[method]


def _single_valued(res: Results, criterion: str) -> None:
    """A criterion with one validation value per epoch (not ``subset-N``'s
    draws), so that it picks one (rate, epoch) per seed."""
    runs = next(iter(res.raw('selection').values()))
    values = next(iter(next(iter(next(iter(runs.values())).values()))
                       .values()))
    if criterion not in values or isinstance(values[criterion], list):
        raise ValueError(f'selection.json: {criterion!r} is not a criterion '
                         'with one value per epoch (full, observed)')


def selection_picks(res: Results, criterion: str) -> str:
    """Per method and seed the (rate, epoch) that full validation labels and
    that CRITERION pick, with the pick's test mAP."""
    _single_valued(res, criterion)
    lines = [f'| method | seed | full labels: rate, epoch (test mAP) | '
             f'{criterion}: rate, epoch (test mAP) |', '| --- ' * 4 + '|']
    for method in _selection(res)['full']:
        for seed, runs in sorted(_selection_runs(res, method).items(),
                                 key=lambda kv: int(kv[0])):
            cells = []
            for name in ('full', criterion):
                lr, epoch, values = selection.pick(runs, name)
                cells.append(f'{_rate(float(lr))}, {epoch} '
                             f'({values["test"]:.2f})')
            lines.append(f'| {label_of(method)} | {seed} | ' +
                         ' | '.join(cells) + ' |')
    return '\n' + '\n'.join(lines) + '\n'


def _selection_same_rate(res: Results, criterion: str) -> str:
    """"13 of 15": the method-seed pairs where CRITERION picks the rate that
    full validation labels pick."""
    _single_valued(res, criterion)
    same = total = 0
    for method in _selection(res)['full']:
        for runs in _selection_runs(res, method).values():
            total += 1
            same += selection.pick(runs, criterion)[0] == selection.pick(
                runs, 'full')[0]
    return f'{same} of {total}'


#: statistic of docs/results/label_stats.json -> how the pages write it
LABEL_FORMATS = {
    'avg_positives': '{:.2f}', 'images': '{:,}', 'train': '{:,}',
    'val': '{:,}', 'test': '{:,}', 'seconds': '{:.0f}',
    'within_group_lift': '{:.2f}', 'between_group_lift': '{:.2f}',
    'max_frequency': '{:.2%}', 'min_frequency': '{:.2%}',
    'an_false_negative_rate': '{:.2%}'
}


def _named_entry(res: Results, stem: str, name: str, what: str,
                 writer: str) -> dict:
    """Entry ``name`` of ``stem``.json, or an error naming what writes it."""
    found = res.raw(stem)
    if name not in found:
        raise ValueError(f'{stem}.json has no {what} {name!r} ({writer} '
                         'writes it)')
    return found[name]


def _label_entry(res: Results, stem: str, name: str) -> dict:
    return _named_entry(res, stem, name, 'data set',
                        "its generator's --record")


def _label_stat(res: Results, stem: str, name: str, field: str) -> str:
    """One statistic of a generated data set, FIELD a dotted path such as
    ``train.avg_positives`` (``train``/``val``: the official splits) or
    ``protocol.val``."""
    value = _label_entry(res, stem, name)
    for key in field.split('.'):
        if not isinstance(value, dict) or key not in value:
            raise ValueError(f'{stem}.json: {name!r} has no {field!r}')
        value = value[key]
    if key not in LABEL_FORMATS:
        raise ValueError(f'{field!r} is none of the statistics '
                         f'{", ".join(LABEL_FORMATS)}')
    return LABEL_FORMATS[key].format(value)


def _suite(entry: dict) -> str:
    like = entry['arguments']['like']
    return {'voc': 'VOC', 'coco': 'COCO'}[like] + '-like'


def label_table(res: Results, stem: str, *names: str) -> str:
    """Each generated proxy's targets (``PROXY_TARGETS``) beside the
    statistics measured on its official train and val (test) splits."""
    entries = [_label_entry(res, stem, n) for n in names]
    lines = ['| statistic | ' + ' | '.join(
        f'{_suite(e)}: target | official train | official val (test)'
        for e in entries) + ' |', '| --- ' * (1 + 3 * len(entries)) + '|']
    rows = {'images': [], 'protocol split': [], 'positives per image': [],
            'most frequent class': [], 'rarest class': [],
            'AN false-negative rate': [],
            'lift within a class group': [],
            'lift across class groups': []}
    for e in entries:
        t, fraction = e['targets'], e['arguments']['fraction']
        size = f'{t["num_train"]:,} / {t["num_test"]:,}'
        rows['images'] += [size if fraction == 1 else
                           f'{fraction:g} of {size}',
                           f'{e["train"]["images"]:,}',
                           f'{e["val"]["images"]:,}']
        p = e['protocol']
        rows['protocol split'] += ['', f'{p["train"]:,} train, '
                                   f'{p["val"]:,} val', f'{p["test"]:,} test']
        fnr = (t['avg_positives'] - 1) / (t['num_classes'] - 1)
        for row, key, target in (
                ('positives per image', 'avg_positives',
                 f'{t["avg_positives"]:.2f}'),
                ('most frequent class', 'max_frequency',
                 f'{t["max_frequency"]:.1%}'),
                ('rarest class', 'min_frequency',
                 f'{t["min_frequency"]:.1%}'),
                ('AN false-negative rate', 'an_false_negative_rate',
                 f'{fnr:.2%}'),
                ('lift within a class group', 'within_group_lift', '-'),
                ('lift across class groups', 'between_group_lift', '-')):
            form = '{:.4f}' if key == 'avg_positives' else \
                LABEL_FORMATS[key]
            rows[row] += [target] + [form.format(e[s][key])
                                     for s in ('train', 'val')]
    lines += [f'| {row} | ' + ' | '.join(cells) + ' |'
              for row, cells in rows.items()]
    return '\n' + '\n'.join(lines) + '\n'


def an_noise_table(res: Results, stem: str, *names: str) -> str:
    """AN's false-negative rate, ``(positives per image - 1) / (classes -
    1)``: measured on each generated data set's official train split, and
    from the real datasets' published statistics."""
    from spml_mm.benchmarks.proxy import PUBLISHED_STATISTICS
    lines = ['| data | classes | positives per image | AN false-negative '
             'rate |', '| --- | --- | --- | --- |']
    for name in names:
        e = _label_entry(res, stem, name)
        classes = e['targets']['num_classes'] if 'targets' in e else \
            e['num_classes']
        what = f'{_suite(e)} proxy' if 'arguments' in e else name
        lines.append(
            f'| {what} (`{e["command"].split()[1]}`, measured, official '
            f'train split) | {classes} | '
            f'{e["train"]["avg_positives"]:.2f} | '
            f'{e["train"]["an_false_negative_rate"]:.2%} |')
    for name, (classes, positives) in PUBLISHED_STATISTICS.items():
        lines.append(f'| {name} (published statistics) | {classes} | '
                     f'{positives:g} | {(positives - 1) / (classes - 1):.2%} '
                     '|')
    return '\n' + '\n'.join(lines) + '\n'


def _probe(res: Results, stem: str, name: str) -> dict:
    return _named_entry(res, stem, name, 'probe of', "the probe's --record")


def probe_table(res: Results, stem: str, *named: str) -> str:
    """Test mAP after each recorded epoch of ``linear_probe``'s full-label
    and AN classifiers; NAMED are ``data=label`` (a row label per data
    folder)."""
    lines = []
    for item in named:
        name, _, label = item.partition('=')
        found = _probe(res, stem, name)
        epochs = sorted(found['full'], key=int)
        if not lines:
            lines = [f'| classes | labels | test mAP after '
                     f'{" / ".join(epochs)} epochs |', '| --- | --- | --- |']
        for labels in ('full', 'AN'):
            lines.append(f'| {label or name} | {labels} | ' + ' / '.join(
                f'{found[labels][e]:.2f}' for e in epochs) + ' |')
    return '\n' + '\n'.join(lines) + '\n'


def _probe_gap(res: Results, stem: str, name: str) -> str:
    """The best full-label epoch's test mAP above the best AN epoch's."""
    found = _probe(res, stem, name)
    return f'{max(found["full"].values()) - max(found["AN"].values()):.2f}'


def _lasd_lambda(res: Results, config: str) -> str:
    """lambda_- of LASD's Theorem 5.4 from a config's loss settings."""
    from mmengine.config import Config

    from spml_mm.models.losses.lasd_loss import theorem_5_4_lambda_neg
    loss = Config.fromfile(osp.join(REPO, config)).model.head.loss
    weight = theorem_5_4_lambda_neg(loss.lambda_pos, loss.avg_positives,
                                    loss.num_classes)
    return f'{weight:.4f}'


def paper_columns(res: Results, *datasets: str) -> str:
    """The papers' table (papers.json) restricted to some datasets."""
    index = [COLUMNS.index(d) for d in datasets]
    lines = ['| method | ' + ' | '.join(datasets) + ' |',
             '| --- ' * (1 + len(datasets)) + '|']
    for name, cells in paper_table().items():
        lines.append(f'| {name} | ' + ' | '.join(cells[i] for i in index) +
                     ' |')
    return '\n' + '\n'.join(lines) + '\n'


#: kind -> renderer(results, *arguments of the block)
KINDS: Dict[str, Callable[..., str]] = {
    # the README's summary table
    'summary': summary,
    # "94.42 +- 0.51": mean and population std over the seeds
    'mean_std': lambda r, stem, m: (f'{r.row(stem, m)["mean"]:.2f} +- '
                                    f'{r.row(stem, m)["std"]:.2f}'),
    # "94.42": the mean
    'mean': lambda r, stem, m: f'{r.row(stem, m)["mean"]:.2f}',
    # "80%": the share of the AN-to-full gap closed
    'gap': _gap,
    # "85.75": one seed's test mAP
    'seed': _seed,
    # "0, 1, 2": the seeds run
    'seeds': _seeds,
    # "63.40 / 66.44 / 67.02": each seed's test mAP
    'seed_list': _seed_list,
    # "609": mean training time of a run in seconds
    'seconds': lambda r, stem, m: f'{r.row(stem, m)["seconds"]:.0f}',
    # "+0.23": STEM's METHOD against BASE's BASE_METHOD, in mean test mAP;
    # "0.23": the same without a sign
    'diff': _diff,
    'delta': _delta,
    # "0.13": the std over the seeds
    'std': lambda r, stem, m: f'{r.row(stem, m)["std"]:.2f}',
    # "18%": STEM's METHOD on BASE's AN-to-full gap
    'gap_vs': _gap_vs,
    # "32.50": best validation mAP at a rate of STEM_lr_search.json
    'lr_val': _lr_val,
    # "3.53": a paper's AN-to-full gap on a dataset, in points
    'paper_gap_points': lambda r, dataset: _paper_gap_points(dataset),
    # "89.83", "112%": a paper's number on VOC, COCO, NUS or CUB (papers.json)
    # and the share of its AN-to-full gap it closes
    'paper': lambda r, dataset, m: _paper(dataset, m),
    'paper_gap': lambda r, dataset, m: _percent(_paper_gap(dataset, m)),
    # tables of the proxy page: learning-rate searches and test mAP with
    # the share of the gap, one column group per proxy json
    'lr_table': lr_table,
    # the papers' table (papers.json), e.g. "paper_columns VOC COCO"
    'paper_columns': paper_columns,
    'share_table': share_table,
    # selecting without full validation labels (selection.json): the table,
    # "0.48" / "-1.21" (CRITERION [METHOD]) and one pick's mean and std
    'selection_table': selection_table,
    'selection_loss': _selection_loss,
    'selection_mean': lambda r, c, m: f'{_selection(r)[c][m]["mean"]:.2f}',
    'selection_std': lambda r, c, m: f'{_selection(r)[c][m]["std"]:.2f}',
    # per method and seed the (rate, epoch) full labels and CRITERION pick;
    # "13 of 15": the method-seed pairs where CRITERION picks full's rate
    'selection_picks': selection_picks,
    'selection_same_rate': _selection_same_rate,
    # generated data (docs/results/label_stats.json, written by
    # make_proxy_data.py / make_demo_data.py --record): the targets beside
    # the measured statistics ("label_table label_stats proxy-voc"), AN's
    # false-negative rate beside the published datasets', and one statistic
    # ("label_stat label_stats proxy-voc train.avg_positives": "1.46")
    'label_table': label_table,
    'an_noise_table': an_noise_table,
    'label_stat': _label_stat,
    # .dev_scripts/analysis/linear_probe.py --record (linear_probe.json): test
    # mAP per epoch ("probe_table linear_probe proxy-voc-f0.2=textures"), the
    # best epoch's of LABELS (full or AN) and the best full above the best AN
    'probe_table': probe_table,
    'probe_best': lambda r, stem, name, labels: (
        f'{max(_probe(r, stem, name)[labels].values()):.2f}'),
    'probe_gap': _probe_gap,
    # "0.0564": LASD's lambda_- by Theorem 5.4 from a config's loss
    'lasd_lambda': _lasd_lambda,
}


def render(spec: str, res: Results) -> str:
    kind, *args = spec.split()
    if kind not in KINDS:
        raise ValueError(f'unknown results block {spec!r}; kinds: '
                         f'{", ".join(KINDS)}')
    return KINDS[kind](res, *args)


def update_text(text: str, res: Results, where: str = '') -> str:
    """``text`` with every block rendered anew."""

    def sub(match):
        try:
            body = render(match.group('spec'), res)
        except (TypeError, ValueError) as e:
            raise ValueError(f'{where}: <!-- results: {match.group("spec")} '
                             f'-->: {e}') from None
        return f'<!-- results: {match.group("spec")} -->{body}' \
            '<!-- /results -->'

    return BLOCK.sub(sub, text)


def hand_copied(text: str) -> List[str]:
    """Means and spreads outside the blocks (numbers typed by hand)."""
    outside = BLOCK.sub('', text)
    return HAND_COPIED.findall(outside)


def typed_decimals(text: str) -> List[str]:
    """Decimal numbers outside the blocks and outside code (a results
    page's numbers typed by hand; commands and config values are code)."""
    return DECIMAL.findall(CODE.sub('', BLOCK.sub('', text)))


def metafile_results(res: Results) -> Dict[str, Tuple[str, str]]:
    """Config -> (mAP, source) of its metafile entry: a demo config's mean
    over the seeds of accuracy.json, a papers' config
    (``configs/<folder>/resnet50_<dataset>.py``) its paper's number."""
    found = {}
    for method in METHODS:
        config = suite_config('demo', method)
        if method in res.rows('accuracy'):
            seeds = _seeds(res, 'accuracy', method)
            runs = (f'mean of seeds {seeds}' if ',' in seeds else
                    f'one run, seed {seeds}')
            found[config] = (f'{res.row("accuracy", method)["mean"]:.2f}',
                             f'spml-mm, docs/results/accuracy.md ({runs})')
    for row in papers()['rows']:
        for dataset in paper_datasets() if row['config_folder'] else ():
            config = f'configs/{row["config_folder"]}/resnet50_{dataset}.py'
            found[config] = (f'{row["mAP"][dataset]:.{row["decimals"]}f}',
                             f'{row["source"]} (not reproduced by spml-mm)')
    return found


def update_metafile(text: str, res: Results) -> str:
    """The ``mAP`` and ``Results From`` of every model entry with a number
    of :func:`metafile_results`."""
    results = metafile_results(res)
    out = []
    for entry in re.split(r'(?m)^(?=  - Name: )', text):
        found = re.search(r'(?m)^    Config: (\S+)', entry)
        if found and found.group(1) in results:
            value, source = results[found.group(1)]
            entry = re.sub(r'(?m)^(          mAP: )\S+',
                           lambda m: m.group(1) + value, entry)
            entry = re.sub(r'(?m)^(      Results From: ).*$',
                           lambda m: m.group(1) + source, entry)
        out.append(entry)
    return ''.join(out)


#: in a page rendered again: text the json does not hold (a command, the
#: machine), and a line made of it (a title); each matches any text
ANY, ANY_LINE = '<any text>', '<any line>'


def _json(path: str, name: Optional[str] = None):
    """The json beside page ``path``: its own (``X.md``: ``X.json``) or
    ``name``."""
    with open(osp.join(osp.dirname(path), name) if name else
              osp.splitext(path)[0] + '.json') as f:
        return json.load(f)


def _written(write: Callable[[str], None], name: str) -> str:
    """File ``name`` that ``write(folder)`` writes, in a temporary folder
    (what it prints dropped)."""
    with tempfile.TemporaryDirectory() as tmp, \
            contextlib.redirect_stdout(io.StringIO()):
        write(tmp)
        with open(osp.join(tmp, name)) as f:
            return f.read()


def _accuracy_page(repo: str, path: str) -> str:
    """A seeds table (``benchmark.accuracy``), with the earlier run
    its command compared against (``--compare JSON LABEL``); the plot's
    line where the plot is kept beside it."""
    found, name = _json(path), osp.basename(path)[:-3]
    methods = [m for m in METHODS if m in found]
    with open(path) as f:
        compare = re.search(r'--compare (\S+) (\S+)`', f.read())
    before = None
    if compare:
        with open(osp.join(repo, compare.group(1))) as f:
            before = (compare.group(2), summarize(json.load(f), methods))
    page = _written(lambda out: accuracy.write_outputs(
        summarize(found, methods), out, ANY, False, before, output=name,
        title=ANY_LINE, runs=found), f'{name}.md')
    plot = f'{name}.png'
    return page if osp.isfile(osp.join(osp.dirname(path), plot)) else \
        page.replace(f'\n![accuracy]({plot})\n', '')


def _lr_search_page(repo: str, path: str) -> str:
    name = osp.basename(path)[:-len('_lr_search.md')]
    suite, regime = name[len('accuracy_'):].split('_')[:2]
    return _written(lambda out: accuracy.write_lr_search_page(
        _json(path), out, name, ANY_LINE, suite, regime.split('-f')[0], 0,
        'spml/mAP', ANY), f'{name}_lr_search.md')


def _selection_page(repo: str, path: str) -> str:
    found = _json(path, 'selection.json')
    table = selection.summarize(
        found, [m for m in STUDY_METHODS if m in found])
    return _written(lambda out: selection.write_page(table, out, ANY,
                                                     ANY_LINE),
                    'selection_table.md')


def _teacher_page(repo: str, path: str) -> str:
    found = _json(path)
    return _written(lambda out: teacher_quality.write_outputs(
        found, out, ANY, found['fraction']), 'teacher_quality.md')


def _release_page(repo: str, path: str) -> str:
    return _written(lambda out: release_agreement.write(_json(path), out,
                                                        ANY),
                    'release_agreement.md')


def _speed_page(repo: str, path: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(osp.dirname(path)):
            if re.fullmatch(r'speed_\w+\.json', name):
                os.symlink(osp.join(osp.dirname(path), name),
                           osp.join(tmp, name))
        return speed.render_speed(tmp)


def _label_bank_page(repo: str, path: str) -> str:
    lines = label_bank.render(_json(path)).split('\n')
    # the first names the command, the machine and its torch threads
    return '\n'.join([ANY_LINE] + lines[1:])


def _data_loading_page(repo: str, path: str) -> str:
    """The table of ``benchmark.data_loading`` under its title and
    the line that names the command's rounds and batches."""
    return '\n'.join([ANY_LINE, '', ANY_LINE, ''] +
                     data_loading.table_lines(_json(path)['rows']))


def _gpu_speed_page(repo: str, path: str) -> str:
    """``speed_gpu.py --render``, with ``head_profile.json`` where there is
    one (as ``gpu_collect`` renders it)."""
    ops = osp.join(osp.dirname(path), 'head_profile.json')
    return gpu.render(_json(path), _json(ops) if osp.isfile(ops) else None)


def _results_page(repo: str, path: str) -> str:
    """docs/RESULTS.md, assembled from the fragments of docs/results."""
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(results_dir(repo), osp.join(tmp, 'results'))
        with open(results.render_results_page(tmp)) as f:
            return f.read()


#: the pages a tool writes whole (a glob of the path in the repository;
#: the first that matches) -> how the page renders from its json(s), and
#: the command that writes it again
TOOL_PAGES: List[Tuple[str, Callable[[str, str], str], str]] = [
    ('docs/RESULTS.md', _results_page,
     'every tool that writes into docs/results (pages.results.'
     'render_results_page)'),
    ('docs/results/*accuracy_*_lr_search.md', _lr_search_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.accuracy --lr-search ... '
     '(the command on the page)'),
    ('docs/results/*accuracy*.md', _accuracy_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.accuracy ... (the command '
     'on the page)'),
    ('docs/results/selection_table.md', _selection_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.selection ... (the command '
     'on the page)'),
    ('docs/results/teacher_quality.md', _teacher_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.teacher_quality '
     '--report-only --out docs/results'),
    ('docs/results/release_agreement.md', _release_page,
     'python .dev_scripts/analysis/release_agreement.py ... (the command on '
     'the page)'),
    ('docs/results/speed.md', _speed_page,
     'the speed tools (the commands on the page)'),
    ('docs/results/label_bank.md', _label_bank_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.label_bank_scale '
     '--render-only --out-dir docs/results'),
    ('docs/results/data_loading.md', _data_loading_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.data_loading ... (the '
     'command on the page)'),
    ('docs/results/label_sets.md',
     lambda repo, path: label_sets.render(_json(path)),
     'PYTHONPATH=.dev_scripts python -m benchmark.label_sets --render-only '
     '--out-dir docs/results'),
    ('docs/results/draws.md', lambda repo, path: draws_page.render(
        _json(path)),
     'PYTHONPATH=.dev_scripts python -m benchmark.draws --render --out-dir '
     'docs/results'),
    ('docs/results/gpu.md', _gpu_speed_page,
     'PYTHONPATH=.dev_scripts python -m benchmark.speed_gpu --render '
     'docs/results/gpu.json --op-profile docs/results/head_profile.json '
     '--out docs/results'),
    ('docs/results/head_profile.md', lambda repo, path: head_profile.page(
        _json(path)),
     'PYTHONPATH=.dev_scripts python -m benchmark.head_profile ... (the '
     'command in its json)'),
    ('docs/results/gpu_tier.md', lambda repo, path: gpu_tier.tier_page(
        _json(path)),
     'PYTHONPATH=.dev_scripts python -m benchmark.gpu_collect OUT (the GPU '
     'command\'s output)'),
    ('docs/results/gpu_profile.md',
     lambda repo, path: gpu_profile.profile_page(_json(path)),
     'PYTHONPATH=.dev_scripts python -m benchmark.gpu_collect OUT (the GPU '
     'command\'s output)'),
]

#: pages a tool wrote without keeping a json, and why: nothing to render
#: them from
NO_JSON = {
    'docs/results/faults.md': 'the fault probe keeps no json: its page is '
    'the record of the outcomes',
    'docs/results/multiview.md': 'typed from benchmark.multiview\'s '
    'printout, which writes no json',
}


def _label_bank_update_problem(repo: str, rel: str,
                               text: str) -> Optional[str]:
    """docs/results/label_bank_update.md prints, in its bank table, the
    "before" column of docs/results/label_bank_update_before.json (the
    run's own --json, the "now" column, was not kept): each before number
    and the before run's source are checked against that json."""
    from benchmark.pages.label_bank import BANK_COLUMNS
    path = osp.join(repo, 'docs', 'results', 'label_bank_update_before.json')
    try:
        before = _json(path)
    except (OSError, ValueError) as e:
        return f'{rel}: cannot read {path} ({type(e).__name__}: {e})'
    how = ('written by PYTHONPATH=.dev_scripts python -m benchmark.label_bank '
           '--before docs/results/label_bank_update_before.json --md ...')
    if f'*before*: {before["source"]}' not in text:
        return (f'{rel}: does not name the before run of its json '
                f'({before["source"]!r}; {how})')
    banks = {r['name']: r for r in before['banks']}
    rows = [line.split('|')[1:-1] for line in text.splitlines()
            if line.startswith('| ') and line.split('|')[1].strip() in banks]
    if len(rows) != len(banks):
        return (f'{rel}: shows {len(rows)} of the {len(banks)} banks of its '
                f'json ({", ".join(banks)}; {how})')
    for cells in rows:
        bank = banks[cells[0].strip()]
        for (key, title), cell in zip(BANK_COLUMNS, cells[1:]):
            old = bank.get(key)
            if old is None:
                shown = '->' not in cell
                expected = 'none'
            else:
                expected = f'{old[1]:.3f}'
                shown = cell.strip().startswith(expected + ' -> ')
            if not shown:
                return (f'{rel}: {bank["name"]}, {title}: {cell.strip()!r}, '
                        f'its json\'s before is {expected} ({how})')
    return None


#: pages that show some of a json's numbers beside others it did not keep:
#: each checked against what it shows of the json
PARTIAL_JSON: Dict[str, Callable[[str, str, str], Optional[str]]] = {
    'docs/results/label_bank_update.md': _label_bank_update_problem,
}


@functools.lru_cache()
def _machine() -> str:
    return machine_summary()


def first_difference(page: str, rendered: str
                     ) -> Optional[Tuple[int, str, str]]:
    """The first line (number, the page's, the rendered one; ``(end)``
    where one text ends) where ``page`` differs from ``rendered``, blank
    lines at the end aside, in which :data:`ANY` (and this machine's
    summary) matches any text and a line holding :data:`ANY_LINE` any line;
    None where none does."""
    expected = rendered.replace(_machine(), ANY).rstrip().splitlines()
    for number, (found, line) in enumerate(itertools.zip_longest(
            page.rstrip().splitlines(), expected), 1):
        if found is None or line is None or (
                ANY_LINE not in line and not re.fullmatch(
                    '.*'.join(map(re.escape, line.split(ANY))), found)):
            return (number, '(end)' if found is None else found,
                    '(end)' if line is None else line)
    return None


def tool_page_problem(repo: str, rel: str, text: str) -> Optional[str]:
    """How ``rel``, a page a tool writes whole, differs from what its json
    renders to (or why nothing checks it); None where it matches."""
    if rel in NO_JSON:
        return None
    if rel in PARTIAL_JSON:
        return PARTIAL_JSON[rel](repo, rel, text)
    found = next(((render, how) for pattern, render, how in TOOL_PAGES
                  if fnmatch(rel, pattern)), None)
    if found is None:
        return (f'{rel}: no <!-- results: ... --> block and no renderer in '
                'TOOL_PAGES of .dev_scripts/docs_tables.py: nothing checks '
                'its numbers against a json')
    render, how = found
    try:
        rendered = render(repo, osp.join(repo, rel))
    except (OSError, KeyError, ValueError) as e:
        return (f'{rel}: cannot be rendered again from its json '
                f'({type(e).__name__}: {e})')
    difference = first_difference(text, rendered)
    if difference is None:
        return None
    number, page, line = difference
    line = line.replace(ANY, '...').replace(ANY_LINE, '...')
    return (f'{rel}: differs from what its json renders to, from line '
            f'{number}: {page[:120]!r}, rendered {line[:120]!r} (written by '
            f'{how})')


def run(repo: str = REPO, check: bool = False,
        folder: Optional[str] = None) -> List[str]:
    """Render every block and metafile; with ``check``, write nothing.

    Returns:
        list[str]: A line per file whose numbers differ from the json (each
        block or metafile that ``check`` found stale, or was rewritten; each
        page a tool writes whole that differs from its json's render, or
        that nothing renders) and per number typed by hand outside a block.
    """
    res = Results(folder or results_dir(repo))
    problems = []
    targets = [(p, update_text) for p in markdown_files(repo)]
    targets += [(p, lambda t, r, w: update_metafile(t, r))
                for p in sorted(glob.glob(
                    osp.join(repo, 'configs', '*', 'metafile.yml')))]
    for path, update in targets:
        with open(path) as f:
            text = f.read()
        rel = osp.relpath(path, repo)
        new = update(text, res, rel)
        if path.endswith('.md') and _is_tool_output(rel, new):
            problem = tool_page_problem(repo, rel, text)
            problems += [problem] if problem else []
        elif path.endswith('.md'):
            typed = typed_decimals(new) if rel.startswith(
                RESULTS_DIR) else hand_copied(new)
            problems += [f'{rel}: {n!r} is typed by hand; put it in a '
                         '<!-- results: ... --> block' for n in typed]
        if new != text:
            problems.append(f'{rel}: numbers differ from the results json' if
                            check else f'{rel}: rewritten')
            if not check:
                with open(path, 'w') as f:
                    f.write(new)
    return problems


RESULTS_DIR = osp.join('docs', 'results') + osp.sep


def _is_tool_output(rel: str, text: str) -> bool:
    """Pages a benchmark tool writes whole (checked against their json's
    render, :func:`tool_page_problem`): the results page, and the pages
    under docs/results without a block. A page there with a block is written
    by hand, and every decimal on it outside the blocks and code is named as
    typed by hand."""
    if rel.startswith(RESULTS_DIR):
        return BLOCK.search(text) is None
    return rel == osp.join('docs', 'RESULTS.md')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='write nothing; exit 1 when a number differs')
    args = parser.parse_args()
    problems = run(check=args.check)
    print('\n'.join(problems) or 'every result number matches its json')
    stale = [p for p in problems if not p.endswith('rewritten')]
    sys.exit(1 if stale else 0)


if __name__ == '__main__':
    main()
